"""Count how many times each node of a graph really ran: a spy on the node functions.

``wrapped, runs = count_runs(nodes)`` returns the same nodes (``node(state, world)``),
each wrapped so that every call that *starts* is counted in ``runs`` (a
``collections.Counter`` by node name), whether it returns or raises. Graded tests use
it to check "the resume did not run parse and retrieve again" from what happened,
not from text a node printed or logged.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any

Node = Callable[[dict[str, Any], Any], dict[str, Any]]


def count_runs(nodes: Mapping[str, Node]) -> tuple[dict[str, Node], Counter[str]]:
    runs: Counter[str] = Counter()

    def spied(name: str, fn: Node) -> Node:
        def node(state: dict[str, Any], world: Any) -> dict[str, Any]:
            runs[name] += 1
            return fn(state, world)

        node.__name__, node.__doc__ = getattr(fn, "__name__", name), fn.__doc__
        return node

    return {name: spied(name, fn) for name, fn in nodes.items()}, runs
