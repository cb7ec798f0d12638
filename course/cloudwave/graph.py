"""The CloudWave support graph: its state and one builder every week uses.

Every CloudWave node has the signature ``node(state, world) -> dict``: it reads
the state, may act on the outside world (billing, mail), and returns the update.
Passing the world in (instead of reaching for a global) is what lets the crash
harness run the very same node in a forked worker against that worker's world.

:func:`build_graph` wires the nodes you give it, in order, into
``START → first → … → last → END`` (or with a router, see ``routes``), and wraps
each node with the crash harness's named points (``before_effect`` and
``after_effect``); outside the harness those points do nothing.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Callable, Mapping
from typing import Annotated, Any, TypedDict

from langgraph.graph import END, START, StateGraph

from course.base import crashpoints

Node = Callable[[dict[str, Any], Any], dict[str, Any]]


class SupportState(TypedDict, total=False):
    """What the CloudWave agent knows about one support conversation."""

    thread_id: str  # the conversation; also the root of every idempotency key
    message: str  # what the customer wrote
    intent: str  # "refund", "pause", "cancel", "charge" or "unknown" (nothing matched)
    customer_id: str
    customer_email: str
    invoice_id: str
    cents: int
    currency: str
    needs_approval: bool
    approved: bool
    refund_cents: int  # weeks 3-4: how much to give back (unset: what the message names)
    decision: dict[str, Any]  # week 4: what the person answered (approved, reason, by whom)
    charge: dict[str, Any]
    refund: dict[str, Any]
    subscription: dict[str, Any]
    email: dict[str, Any]
    log: Annotated[list[str], operator.add]  # one line per node run (re-runs show up twice)


LINEAR_FLOW = ("parse", "retrieve", "charge", "email")


def build_graph(
    nodes: Mapping[str, Node],
    *,
    world: Any,
    checkpointer: Any = None,
    routes: tuple[str, Callable[[dict[str, Any]], str], Mapping[str, str]] | None = None,
    join: str | None = None,
    retry_policies: Mapping[str, Any] | None = None,
    interrupt_before: list[str] | None = None,
):
    """Compile a CloudWave graph.

    ``nodes``: name → ``node(state, world)``; without ``routes`` they run in the
    order given. With ``routes=(after, route_fn, {label: node})`` the nodes up
    to ``after`` run in order, then ``route_fn(state)`` picks a label, the
    chosen node runs, and every branch continues to ``join`` (for example the
    email node), which runs last.
    """
    if not nodes:
        raise ValueError("build_graph needs at least one node")
    graph = StateGraph(SupportState)
    for name, fn in nodes.items():
        policy = (retry_policies or {}).get(name)
        graph.add_node(name, instrument(name, fn, world), retry_policy=policy)

    names = list(nodes)
    if routes is None:
        chain = names
        graph.add_edge(START, chain[0])
        for a, b in itertools.pairwise(chain):
            graph.add_edge(a, b)
        graph.add_edge(chain[-1], END)
    else:
        after, route_fn, branches = routes
        missing = [n for n in [after, *branches.values(), *([join] if join else [])]
                   if n not in nodes]
        if missing:
            raise ValueError(f"routes name nodes that were not given: {missing}")
        head = names[: names.index(after) + 1]
        graph.add_edge(START, head[0])
        for a, b in itertools.pairwise(head):
            graph.add_edge(a, b)
        graph.add_conditional_edges(after, route_fn, dict(branches))
        for target in set(branches.values()):
            graph.add_edge(target, join if join else END)
        if join:
            graph.add_edge(join, END)
    return graph.compile(checkpointer=checkpointer, interrupt_before=interrupt_before)


def instrument(name: str, fn: Node, world: Any) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """Bind ``world`` and put the harness's crash points around the node's body."""

    def node(state: dict[str, Any]) -> dict[str, Any]:
        crashpoints.reach(name, "before_effect")
        update = fn(state, world)
        crashpoints.reach(name, "after_effect")
        return update

    node.__name__ = name
    node.__doc__ = fn.__doc__
    return node


def draw_ascii(graph) -> str:
    """The graph as text, one line per node with where it goes next.

    Works offline (``draw_mermaid_png`` calls a web service by default). Plain edges
    are drawn ``--->`` and conditional ones ``-?->``. Several targets of one kind are
    joined: ``a + b`` for plain edges (both run, in the same step), ``a | b`` for a
    route's choices (it picks one); a last line says so whenever one appears.
    """
    drawn = graph.get_graph()
    outgoing: dict[str, dict[str, list[str]]] = {}
    for edge in drawn.edges:
        arrow = "-?->" if edge.conditional else "--->"
        target = edge.target.replace("__end__", "END")
        outgoing.setdefault(edge.source, {}).setdefault(arrow, []).append(target)
    order = [n for n in drawn.nodes if n not in ("__start__", "__end__")]
    labels = {name: {"__start__": "START"}.get(name, name) for name in ["__start__", *order]}
    width = max(len(label) for label in labels.values())  # the longest name sets the column
    joins = {"--->": " + ", "-?->": " | "}
    lines, used = [], set()
    for name, label in labels.items():
        for arrow, targets in outgoing.get(name, {}).items():
            if len(targets) > 1:
                used.add(arrow)
            lines.append(f"{label:>{width}} {arrow} {joins[arrow].join(targets)}".rstrip())
    legend = {"--->": "a + b: both run, in the same step",
              "-?->": "a | b: the route picks one"}
    if used:
        lines.append("(" + "; ".join(legend[a] for a in ("--->", "-?->") if a in used) + ")")
    return "\n".join(lines)
