"""Reference CloudWave nodes, naive and keyed, and the graphs built from them.

Every node is ``node(state, world) -> dict`` (see :mod:`course.cloudwave.graph`).

- :func:`parse` reads the customer's message (a deterministic stand-in for the
  model: week 2 swaps in the scripted chat model).
- :func:`retrieve` looks the invoice and customer up.
- ``charge_*``/``refund_*``/``email_*`` act on the world. The ``naive`` ones
  send no key, so a re-run after a crash repeats the effect. The ``keyed`` ones
  derive every key from the thread, the node and the business object (never
  from time or randomness), and go through :func:`course.durable.guard.guarded`.

:func:`naive_graph` and :func:`keyed_graph` have the signature the crash
harness expects: ``factory(world, checkpointer) -> compiled graph``.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from typing import Any

from course.cloudwave.graph import build_graph
from course.durable.guard import guarded, readable_key
from course.world.catalogue import CUSTOMERS, INVOICES, subscription_of

_INVOICE = re.compile(r"\binv_\d+\b")
_INTENTS = (("refund", "refund"), ("pause", "pause"), ("cancel", "cancel"), ("pay", "charge"),
            ("charge", "charge"))


def parse(state: dict[str, Any], world: Any) -> dict[str, Any]:
    """Pull the intent and the invoice id out of the customer's message.

    The first of refund, pause, cancel, pay/charge that the
    lowercased message contains (as a substring) gives the intent, else ``"unknown"``;
    the first ``inv_<digits>`` is the invoice (``""`` if none); ``log`` is ``["parse"]``.
    """
    text = state["message"]
    lowered = text.lower()
    intent = next((name for word, name in _INTENTS if word in lowered), "unknown")
    invoice = _INVOICE.search(text)
    return {
        "intent": intent,
        "invoice_id": invoice.group(0) if invoice else "",
        "log": ["parse"],
    }


def retrieve(state: dict[str, Any], world: Any) -> dict[str, Any]:
    """Look ``invoice_id`` up in the catalogue (an unknown one raises ``ValueError``).

    Returns the invoice's ``customer_id``, that customer's ``customer_email``, the
    amount as ``cents`` (whole cents) and ``currency``, and ``log`` ``["retrieve"]``.
    """
    invoice = INVOICES.get(state.get("invoice_id", ""))
    if invoice is None:
        raise ValueError(f"no such invoice: {state.get('invoice_id')!r}")
    customer = CUSTOMERS[invoice.customer_id]
    return {
        "customer_id": customer.id,
        "customer_email": customer.email,
        "cents": invoice.cents,
        "currency": invoice.currency,
        "log": ["retrieve"],
    }


# --------------------------------------------------------------------- naive
def charge_naive(state: dict[str, Any], world: Any) -> dict[str, Any]:
    """Charge with no key: every run of this node is a new capture."""
    result = world.billing.charge(customer_id=state["customer_id"],
                                  invoice_id=state["invoice_id"], cents=state["cents"],
                                  currency=state["currency"])
    return {"charge": result, "log": ["charge"]}


def email_naive(state: dict[str, Any], world: Any) -> dict[str, Any]:
    """Send the receipt with no email id: every run sends another mail.

    Returns the mail vendor's answer as ``email`` and ``log`` ``["email"]``.
    """
    message = world.mail.send(**receipt(state))
    return {"email": message, "log": ["email"]}


# --------------------------------------------------------------------- keyed
def email_key(state: dict[str, Any], template: str) -> str:
    """thread + template + customer: one mail of each kind per conversation."""
    return readable_key(state["thread_id"], template, state["customer_id"])


def charge_keyed(state: dict[str, Any], world: Any) -> dict[str, Any]:
    """Record intent, charge with a key the provider deduplicates on, record the result."""
    args = {"customer_id": state["customer_id"], "invoice_id": state["invoice_id"],
            "cents": state["cents"], "currency": state["currency"]}

    def capture(idem_key: str, **kwargs: Any) -> dict[str, Any]:
        return world.billing.charge(**kwargs, idempotency_key=idem_key)

    result = guarded(state["thread_id"], "charge", capture, args, store=world.records)
    return {"charge": result, "log": ["charge"]}


def refund_keyed(state: dict[str, Any], world: Any) -> dict[str, Any]:
    args = {"customer_id": state["customer_id"], "invoice_id": state["invoice_id"],
            "cents": state["cents"]}

    def give_back(idem_key: str, **kwargs: Any) -> dict[str, Any]:
        return world.billing.refund(**kwargs, idempotency_key=idem_key)

    result = guarded(state["thread_id"], "refund", give_back, args, store=world.records)
    return {"refund": result, "log": ["refund"]}


def refund_naive(state: dict[str, Any], world: Any) -> dict[str, Any]:
    """Refund the invoice's full amount with no key: every run asks the bank again (a
    second full refund is refused only because it would exceed the invoice, a smaller
    one would be paid twice).

    Returns the bank's answer as ``refund`` and ``log`` ``["refund"]``.
    """
    result = world.billing.refund(customer_id=state["customer_id"],
                                  invoice_id=state["invoice_id"], cents=state["cents"])
    return {"refund": result, "log": ["refund"]}


def subscription_keyed(action: str):
    """A node that pauses or cancels the customer's subscription, keyed."""
    return _subscription_node(action, keyed=True)


def subscription_naive(action: str):
    """The same node with no key: every run of it is another change at the bank."""
    return _subscription_node(action, keyed=False)


def _subscription_node(action: str, *, keyed: bool):
    def change(state: dict[str, Any], world: Any) -> dict[str, Any]:
        sub = subscription_of(state["customer_id"])
        key = readable_key(state["thread_id"], action, sub.id) if keyed else None
        result = world.billing.change_subscription(subscription_id=sub.id, action=action,
                                                   idempotency_key=key)
        return {"subscription": result, "log": [action]}

    change.__name__ = action
    return change


# The keyed graphs' pause and cancel nodes. One code object serves every node
# _subscription_node makes, so week 5's declared reference (pause_keyed) is seen whichever
# of them an answer calls or binds.
pause_keyed = subscription_keyed("pause")
cancel_keyed = subscription_keyed("cancel")


def email_keyed(state: dict[str, Any], world: Any) -> dict[str, Any]:
    """Send the receipt under an email id the vendor deduplicates on."""
    mail = receipt(state)
    message = world.mail.send(**mail, email_id=email_key(state, mail["template"]))
    return {"email": message, "log": ["email"]}


def receipt(state: dict[str, Any]) -> dict[str, str]:
    """The mail that follows the money node (its text names the invoice, for the ledger)."""
    intent = state.get("intent", "charge")
    amount = f"{state.get('cents', 0) / 100:.2f} {state.get('currency', 'usd').upper()}"
    invoice = state.get("invoice_id", "")
    texts = {
        "charge": ("payment_receipt", "Your CloudWave payment",
                   f"We charged {amount} for invoice {invoice}. Thank you."),
        "refund": ("refund_receipt", "We refunded you",
                   f"We refunded {amount} for invoice {invoice}."),
        "pause": ("pause_notice", "Your subscription is paused",
                  f"Your subscription is paused. Last invoice {invoice}."),
        "cancel": ("cancel_notice", "Your subscription is cancelled",
                   f"Your subscription is cancelled. Last invoice {invoice}."),
    }
    template, subject, body = texts.get(intent, texts["charge"])
    return {"to": state["customer_email"], "template": template, "subject": subject,
            "body": body}


NAIVE_NODES = {"parse": parse, "retrieve": retrieve, "charge": charge_naive,
               "email": email_naive}
KEYED_NODES = {"parse": parse, "retrieve": retrieve, "charge": charge_keyed,
               "email": email_keyed}


def naive_graph(world: Any, checkpointer: Any = None):
    """parse → retrieve → charge → email with no keys anywhere."""
    return build_graph(NAIVE_NODES, world=world, checkpointer=checkpointer)


def keyed_graph(world: Any, checkpointer: Any = None):
    """The same graph with a guarded, keyed charge and a keyed receipt."""
    return build_graph(KEYED_NODES, world=world, checkpointer=checkpointer)


def route_by_intent(state: dict[str, Any]) -> str:
    """The refund flow's router (weeks 3 to 6), whose conversations all ask for a refund.

    Not a router to ship: an intent it does not know goes to ``refund``, where week 2's
    rule (:func:`course.cloudwave.routes.reply`) sends anything unplanned to the branch that
    cannot hurt the customer. Week 3's notebook says so and prints it."""
    return state.get("intent", "unknown") if state.get("intent") in {
        "charge", "refund", "pause", "cancel"} else "refund"


def support_graph(world: Any, checkpointer: Any = None):
    """parse → retrieve → (charge | refund | pause | cancel) → email, all keyed."""
    nodes = {"parse": parse, "retrieve": retrieve, "charge": charge_keyed,
             "refund": refund_keyed, "pause": pause_keyed, "cancel": cancel_keyed,
             "email": email_keyed}
    return build_graph(nodes, world=world, checkpointer=checkpointer,
                       routes=("retrieve", route_by_intent,
                               {k: k for k in ("charge", "refund", "pause", "cancel")}),
                       join="email")


GRAPHS = {"naive": naive_graph, "keyed": keyed_graph}


def resolve_factory(factory: Callable[..., Any] | str) -> Callable[..., Any]:
    """The graph factory ``factory(world, checkpointer)`` that the crash harness runs:
    ``"naive"``, ``"keyed"``, ``"package.module:function"`` or a callable."""
    if callable(factory):
        return factory
    if factory in GRAPHS:
        return GRAPHS[factory]
    if ":" in factory:
        module, _, attr = factory.partition(":")
        found = getattr(importlib.import_module(module), attr, None)
        if callable(found):
            return found
        raise ValueError(f"{factory!r}: {module} has no callable {attr!r}")
    raise ValueError(f"unknown graph {factory!r}: use naive, keyed or module:function")

DEFAULT_MESSAGE = "Hi, this is Ada (ada@example.com). Please pay invoice inv_9 with my card."
