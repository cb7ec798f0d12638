"""Week 1's CloudWave graph, a plan in four steps: parse → retrieve → refund → email.

Promises:
- :data:`REFUND_FLOW` names the four steps in order; :func:`refund_graph` compiles
  them through :func:`course.cloudwave.graph.build_graph` (the reference nodes,
  any of which you may replace by your own ``node(state, world)``).
- :func:`unwired` gives the same four nodes added to a ``StateGraph`` with no
  edges at all, so a lesson can have the student draw the edges.
- :func:`edges_of` reads a compiled graph back as ``{(source, target)}`` with
  ``"START"`` and ``"END"`` for LangGraph's two special nodes (what a grader or a
  reader of the drawing checks).
- :func:`state_after_each_step` runs a graph once and returns, per step, the node
  that ran, its own update and the whole state after it; :func:`steps_table`
  shows the same as a :class:`course.base.Table` (the "state as a table" picture).

The week-1 nodes write with no idempotency key (weeks 3-5 add checkpoints and keys
to this same graph).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langgraph.graph import END, START, StateGraph

from course.base.table import Table
from course.cloudwave.graph import Node, SupportState, build_graph, instrument
from course.cloudwave.nodes import email_naive, parse, refund_naive, retrieve

REFUND_FLOW = ("parse", "retrieve", "refund", "email")
REFERENCE_NODES: dict[str, Node] = {"parse": parse, "retrieve": retrieve,
                                    "refund": refund_naive, "email": email_naive}
SPECIAL = {START: "START", END: "END"}


def _nodes(overrides: Mapping[str, Node] | None) -> dict[str, Node]:
    unknown = sorted(set(overrides or {}) - set(REFUND_FLOW))
    if unknown:
        raise ValueError(f"week 1's graph has the nodes {list(REFUND_FLOW)}; "
                         f"there is no {', '.join(map(repr, unknown))}")
    return {**REFERENCE_NODES, **(overrides or {})}


def refund_graph(world: Any, checkpointer: Any = None, *,
                 nodes: Mapping[str, Node] | None = None):
    """parse → retrieve → refund → email, compiled; ``nodes`` replaces reference nodes by name."""
    return build_graph(_nodes(nodes), world=world, checkpointer=checkpointer)


def unwired(world: Any, *, nodes: Mapping[str, Node] | None = None) -> StateGraph:
    """A ``StateGraph(SupportState)`` holding the four nodes (bound to ``world``), no edges."""
    builder = StateGraph(SupportState)
    for name, fn in _nodes(nodes).items():
        builder.add_node(name, instrument(name, fn, world))
    return builder


def edges_of(graph: Any) -> set[tuple[str, str]]:
    """``{(source, target)}`` of a compiled graph, with START and END spelled out."""
    drawn = graph.get_graph()
    return {(SPECIAL.get(e.source, e.source), SPECIAL.get(e.target, e.target))
            for e in drawn.edges}


def state_after_each_step(graph: Any, inputs: dict[str, Any],
                          config: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """One entry per node run: ``{"node", "update", "state"}`` (state = everything after it)."""
    steps: list[dict[str, Any]] = []
    pending: list[tuple[str, dict[str, Any]]] = []
    for mode, chunk in graph.stream(inputs, config, stream_mode=["updates", "values"]):
        if mode == "updates":
            pending.extend((name, update or {}) for name, update in chunk.items())
        elif pending:  # the state after the step whose updates came just before
            for name, update in pending:
                steps.append({"node": name, "update": update, "state": dict(chunk)})
            pending = []
    return steps


def steps_table(graph: Any, inputs: dict[str, Any], fields: list[str],
                config: dict[str, Any] | None = None) -> Table:
    """The state after each step as a table: one row per node, one column per field."""
    rows = [{"after": step["node"],
             **{f: _short(step["state"].get(f, "")) for f in fields}}
            for step in state_after_each_step(graph, inputs, config)]
    return Table(rows, ["after", *fields], title="the state after each step")


def _short(value: Any, width: int = 64) -> Any:
    if isinstance(value, dict):  # an answer from the outside world: its id says enough
        return value.get("id", "{...}")
    text = str(value)
    return value if len(text) <= width else text[: width - 1] + "…"
