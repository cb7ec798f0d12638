"""Week 4's approval step: what a person is asked, what they answered, and the graph around it.

- :data:`APPROVAL_THRESHOLD_CENTS`: refunds above this wait for a person.
- :func:`approval_request`: the question put to the person (the value passed to
  ``interrupt``). It names everything the approval lets happen: the refund, the
  mail and, when the graph posts it (``state["notifies_partner"]``), the partner
  webhook that ignores keys, so a person allows it instead of a retry.
- :func:`read_decision`: the person's answer (the ``Command(resume=...)``
  value) checked and normalised to ``{"approved", "reason", "by"}``; a
  malformed answer is a one-line ``ValueError``.
- :func:`ask_a_person`: a reference approval node (``node(state, world)``).
- :func:`notify_partner`: posts the webhook the approval named.
- :func:`approval_notice` / :func:`notices_sent`: the mail that tells the approvals
  desk a refund is waiting, and how many of them the desk got (week 4's
  "code before ``interrupt()`` runs again" lesson sends it).
- :func:`approval_graph`: ``parse → retrieve → [extra nodes] → approve →
  refund → [notify_partner] → email``; a rejection ends the run after
  ``approve`` (nothing is refunded, nothing is sent). With ``partner=True`` the
  approval node sees ``state["notifies_partner"] = True`` (only that node, only
  for that call: it is not a state channel), so the request it builds names the
  webhook; without it the request does not.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any

from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt

from course.cloudwave.graph import Node, SupportState, instrument
from course.cloudwave.nodes import email_naive, parse, refund_keyed, retrieve

APPROVAL_THRESHOLD_CENTS = 5000  # 50.00 in the invoice's currency
APPROVERS = "approvals@cloudwave.example"


def approval_request(state: Mapping[str, Any]) -> dict[str, Any]:
    """What the person approves: the refund, and everything it lets happen afterwards (the
    partner webhook only when the graph posts it: ``state["notifies_partner"]``)."""
    amount = f"{state['cents'] / 100:.2f} {state['currency'].upper()}"
    request = {
        "question": f"Refund {amount} on {state['invoice_id']} to {state['customer_id']}?",
        "thread_id": state["thread_id"], "invoice_id": state["invoice_id"],
        "customer_id": state["customer_id"], "cents": state["cents"],
        "currency": state["currency"],
        "will_send": ["refund " + amount, f"mail to {state.get('customer_email', '')}"],
    }
    if state.get("notifies_partner"):
        request["will_send"].append(f"partner webhook refund.issued for {state['invoice_id']}")
        request["partner_webhook"] = {"event": "refund.issued",
                                      "payload": partner_payload(state)}
    return request


def approval_notice(state: Mapping[str, Any]) -> dict[str, str]:
    """The mail to the approvals desk (``world.mail.send(**approval_notice(state), ...)``)."""
    amount = f"{state['cents'] / 100:.2f} {state['currency'].upper()}"
    return {"to": APPROVERS, "template": "approval_needed",
            "subject": f"Refund waiting for approval: {state['invoice_id']}",
            "body": f"A refund of {amount} on invoice {state['invoice_id']} "
                    f"(conversation {state['thread_id']}) is waiting for your decision."}


def notices_sent(world: Any) -> int:
    """How many approval notices the approvals desk received."""
    return sum(m["to"] == APPROVERS for m in world.mail.sent())


def partner_payload(state: Mapping[str, Any]) -> dict[str, Any]:
    return {"invoice_id": state["invoice_id"], "customer_id": state["customer_id"],
            "cents": state["cents"], "currency": state["currency"]}


def read_decision(answer: Any, *, by: str = "person") -> dict[str, Any]:
    """``{"approved": bool, "reason": str, "by": by}`` from a resume value.

    Accepts ``{"approved": True/False, "reason": "..."}``; a rejection needs a reason.
    """
    if not isinstance(answer, Mapping) or not isinstance(answer.get("approved"), bool):
        raise ValueError("resume with {'approved': True or False, 'reason': '...'}, "
                         f"not {answer!r}")
    reason = answer.get("reason", "")
    if not isinstance(reason, str):
        raise ValueError(f"the reason must be text, not {reason!r}")
    if not answer["approved"] and not reason.strip():
        raise ValueError("a rejection needs a reason the customer can be told")
    return {"approved": answer["approved"], "reason": reason.strip(), "by": by}


def ask_a_person(state: dict[str, Any], world: Any) -> dict[str, Any]:
    """Refunds over the threshold wait for a person; smaller ones are approved by the policy."""
    if state["cents"] <= APPROVAL_THRESHOLD_CENTS:
        decision = {"approved": True, "reason": "under the approval threshold", "by": "policy"}
        return {"needs_approval": False, "approved": True, "decision": decision,
                "log": ["approve"]}
    decision = read_decision(interrupt(approval_request(state)))
    return {"needs_approval": True, "approved": decision["approved"], "decision": decision,
            "log": ["approve"]}


def notify_partner(state: dict[str, Any], world: Any) -> dict[str, Any]:
    """Post the ``refund.issued`` webhook (the partner ignores keys: it runs once per approval
    only if nothing re-runs this node)."""
    world.webhook.post("refund.issued", partner_payload(state))
    return {"log": ["notify_partner"]}


def approval_graph(world: Any, checkpointer: Any = None, *, approve: Node = ask_a_person,
                   refund: Node = refund_keyed, email: Node = email_naive,
                   before_approval: Mapping[str, Node] | None = None,
                   partner: bool = False):
    """The refund flow with a person in it (see the module docstring)."""
    head: dict[str, Node] = {"parse": parse, "retrieve": retrieve, **(before_approval or {}),
                             "approve": _telling_the_partner(approve) if partner else approve}
    tail: dict[str, Node] = {"refund": refund, **({"notify_partner": notify_partner}
                                                  if partner else {}), "email": email}
    clash = sorted(set(before_approval or {}) & {"parse", "retrieve", "approve", *tail})
    if clash:
        raise ValueError(f"before_approval reuses node names {clash}")
    graph = StateGraph(SupportState)
    for name, fn in {**head, **tail}.items():
        graph.add_node(name, instrument(name, fn, world))
    names = list(head)
    graph.add_edge(START, names[0])
    for a, b in itertools.pairwise(names):
        graph.add_edge(a, b)
    graph.add_conditional_edges("approve", _approved_or_not, {"refund": "refund", "end": END})
    tail_names = list(tail)
    for a, b in itertools.pairwise(tail_names):
        graph.add_edge(a, b)
    graph.add_edge(tail_names[-1], END)
    return graph.compile(checkpointer=checkpointer)


def _telling_the_partner(approve: Node) -> Node:
    """``approve``, called with ``notifies_partner`` in its state: the graph posts the
    partner webhook after a yes, so the request must name it."""
    def approve_naming_the_webhook(state: dict[str, Any], world: Any) -> dict[str, Any]:
        return approve({**state, "notifies_partner": True}, world)

    approve_naming_the_webhook.__doc__ = approve.__doc__
    return approve_naming_the_webhook


def _approved_or_not(state: dict[str, Any]) -> str:
    return "refund" if state.get("approved") else "end"
