"""Week 2's routed CloudWave graph: parse → retrieve → (refund | pause | cancel | answer) → email.

Promises:
- :data:`ROUTE_LABELS` are the four branches; ``answer`` is the safe one (it
  changes nothing outside the graph), the place for anything the agent does not
  understand.
- :func:`routed_graph` compiles the graph through
  :func:`course.cloudwave.graph.build_graph` with *your* route function (any
  ``route(state) -> label``). A route that returns something that is not a
  label stops the run with a one-line ``ValueError`` naming what it returned.
  The first node may be replaced (``first=``: e.g. a model choosing a tool,
  :func:`course.cloudwave.tools.choose_tool`), ``retrieve`` may read through a
  :class:`course.cloudwave.flaky.FlakyCatalogue`, and ``retry_policies`` go to
  ``build_graph`` unchanged.
- :func:`answer` writes nothing; :func:`reply` is the email node every branch
  joins: the branch's receipt, or for ``answer`` a note that a person will reply.

The write nodes send no key: week 2 is where the graph learns to fail, week 5
is where its writes learn to be repeated safely.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from course.cloudwave.flaky import FlakyCatalogue, retrieve_from
from course.cloudwave.graph import Node, build_graph
from course.cloudwave.nodes import parse, receipt, refund_naive, retrieve, subscription_naive

ROUTE_LABELS = ("refund", "pause", "cancel", "answer")
Route = Callable[[dict[str, Any]], str]


def answer(state: dict[str, Any], world: Any) -> dict[str, Any]:
    """The safe branch: nothing changes at the bank; the email says a person will reply."""
    return {"log": ["answer"]}


def reply(state: dict[str, Any], world: Any) -> dict[str, Any]:
    """The email every branch joins at (no key yet: a re-run mails again)."""
    if state.get("intent") in ("refund", "pause", "cancel"):
        mail = receipt(state)
    else:
        mail = {"to": state["customer_email"], "template": "answer",
                "subject": "We read your message",
                "body": f"A person from CloudWave will answer you about invoice "
                        f"{state.get('invoice_id', '')} today."}
    return {"email": world.mail.send(**mail), "log": ["email"]}


def checked(route: Route) -> Route:
    """``route``, stopping the run with a clear error when it returns something unknown."""

    def route_checked(state: dict[str, Any]) -> str:
        label = route(state)
        if label not in ROUTE_LABELS:
            raise ValueError(f"the route function returned {label!r}; a route must be one of "
                             f"{', '.join(ROUTE_LABELS)}")
        return label

    route_checked.__name__ = getattr(route, "__name__", "route")
    return route_checked


def routed_nodes(*, first: Node = parse, catalogue: FlakyCatalogue | None = None,
                 nodes: Mapping[str, Node] | None = None) -> dict[str, Node]:
    """The seven nodes of week 2's graph, in order (``nodes`` replaces some by name)."""
    made: dict[str, Node] = {
        "parse": first,
        "retrieve": retrieve if catalogue is None else retrieve_from(catalogue),
        "refund": refund_naive, "pause": subscription_naive("pause"),
        "cancel": subscription_naive("cancel"), "answer": answer, "email": reply}
    unknown = sorted(set(nodes or {}) - set(made))
    if unknown:
        raise ValueError(f"week 2's graph has the nodes {list(made)}; there is no {unknown}")
    return {**made, **(nodes or {})}


def routed_graph(world: Any, route: Route, *, first: Node = parse,
                 catalogue: FlakyCatalogue | None = None,
                 retry_policies: Mapping[str, Any] | None = None,
                 nodes: Mapping[str, Node] | None = None, checkpointer: Any = None):
    """parse → retrieve → route(state) picks a branch → email."""
    made = routed_nodes(first=first, catalogue=catalogue, nodes=nodes)
    unknown = sorted(set(retry_policies or {}) - set(made))
    if unknown:
        raise ValueError(f"retry policies for nodes the graph does not have: {unknown}; "
                         f"its nodes are {list(made)}")
    return build_graph(made, world=world, checkpointer=checkpointer,
                       routes=("retrieve", checked(route), {k: k for k in ROUTE_LABELS}),
                       join="email", retry_policies=retry_policies)
