"""The routed CloudWave graph of weeks 1-2, before it has keys: the one weeks 3 and 4 start from.

``parse → retrieve → (refund | pause | cancel) → email``: the router reads the
intent that ``parse`` found, the chosen node acts on the world, every branch
joins at ``email``. The refund and the email are the naive nodes (no key), so a
re-run repeats them: week 3 ends on that cliff-hanger and week 5 fixes it.

The refund gives back a part of the invoice (:func:`refund_asked`): the amount
in ``state["refund_cents"]``, else the amount the message names ("refund 40.00"),
else the whole invoice. A partial refund is what makes a repeat visible: the
bank (like Stripe) refuses refunds that add up to more than the invoice, so
refunding a whole invoice twice fails instead of paying twice.

- :func:`support_nodes`: the nodes by name, with any of them swapped
  (``support_nodes(refund=my_refund)``).
- :func:`build_support_graph`: those nodes wired with the routes and the join.
- :func:`naive_support_graph`: ``factory(world, checkpointer)`` for the crash
  harness (``CrashHarness(naive_support_graph, message=REFUND_MESSAGE, ...)``).
"""

from __future__ import annotations

import re
from typing import Any

from course.cloudwave.graph import Node, build_graph
from course.cloudwave.nodes import (
    email_naive,
    parse,
    retrieve,
    route_by_intent,
    subscription_keyed,
)

ROUTED = ("refund", "pause", "cancel")
REFUND_MESSAGE = "Hi, Marta here. Please refund 40.00 of invoice inv_11, the unused days."
_AMOUNT = re.compile(r"\b(\d+)\.(\d{2})\b")


def refund_cents(state: dict[str, Any]) -> int:
    """How much this conversation refunds (see the module docstring)."""
    if state.get("refund_cents"):
        return int(state["refund_cents"])
    named = _AMOUNT.search(state.get("message", ""))
    return int(named.group(1)) * 100 + int(named.group(2)) if named else int(state["cents"])


def refund_asked(state: dict[str, Any], world: Any) -> dict[str, Any]:
    """Refund the amount asked for, with no key: every run of this node refunds again."""
    cents = refund_cents(state)
    result = world.billing.refund(customer_id=state["customer_id"],
                                  invoice_id=state["invoice_id"], cents=cents)
    return {"refund": result, "cents": cents, "log": ["refund"]}


def support_nodes(**swap: Node) -> dict[str, Node]:
    """The routed graph's nodes in order; ``swap`` replaces nodes by name (unknown names fail)."""
    nodes: dict[str, Node] = {"parse": parse, "retrieve": retrieve, "refund": refund_asked,
                              "pause": subscription_keyed("pause"),
                              "cancel": subscription_keyed("cancel"), "email": email_naive}
    unknown = sorted(set(swap) - set(nodes))
    if unknown:
        raise ValueError(f"the support graph has no node {unknown}: it has {', '.join(nodes)}")
    return {**nodes, **swap}


def build_support_graph(nodes: dict[str, Node], *, world: Any, checkpointer: Any = None):
    """``nodes`` (see :func:`support_nodes`) routed by intent after ``retrieve``, joined at
    ``email``."""
    return build_graph(nodes, world=world, checkpointer=checkpointer,
                       routes=("retrieve", route_by_intent, {k: k for k in ROUTED}),
                       join="email")


def naive_support_graph(world: Any, checkpointer: Any = None):
    """The routed graph with the naive refund and email (no keys anywhere)."""
    return build_support_graph(support_nodes(), world=world, checkpointer=checkpointer)
