"""What a well-formed request to the billing simulator is, and how requests are compared.

Promises: each ``check_*`` returns quietly for a valid value and raises
:class:`~course.world.billing_errors.InvalidRequest` (with a sentence naming the value)
otherwise: a key of 1 to :data:`KEY_MAX_CHARS` characters (or none), a whole positive
number of cents up to ``MAX_CENTS``, a known currency, a known customer's own invoice.
:func:`fingerprint` is the same text for the same call with the same parameters and
different text otherwise: it is what a key is compared by.

May import: :mod:`course.world.catalogue`, :mod:`course.world.billing_errors`.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from course.world.billing_errors import InvalidRequest
from course.world.catalogue import CURRENCIES, CUSTOMERS, INVOICES, MAX_CENTS, Invoice

KEY_MAX_CHARS = 255


def fingerprint(op: str, params: dict[str, Any]) -> str:
    """A digest of the operation and its parameters (their order does not matter)."""
    raw = json.dumps({"op": op, **params}, sort_keys=True)
    return hashlib.sha256(raw.encode()).hexdigest()


def check_key(key: str | None) -> None:
    if key is None:
        return
    if not isinstance(key, str) or not key:
        raise InvalidRequest(f"an idempotency key must be a non-empty string, got {key!r}")
    if len(key) > KEY_MAX_CHARS:
        raise InvalidRequest(
            f"idempotency key is {len(key)} characters long; the limit is {KEY_MAX_CHARS}"
        )


def check_amount(cents: Any) -> None:
    if isinstance(cents, bool) or not isinstance(cents, int):
        raise InvalidRequest(
            f"amount must be a whole number of cents (an int), got {cents!r} "
            f"({type(cents).__name__})"
        )
    if cents <= 0:
        raise InvalidRequest(f"amount must be positive, got {cents} cents")
    if cents > MAX_CENTS:
        raise InvalidRequest(f"amount {cents} cents is over the limit of {MAX_CENTS} cents")


def check_currency(currency: Any) -> None:
    if currency not in CURRENCIES:
        raise InvalidRequest(
            f"unknown currency {currency!r}; use one of {', '.join(sorted(CURRENCIES))}"
        )


def check_invoice(customer_id: str, invoice_id: str) -> Invoice:
    """The invoice, once it is known to exist and to belong to ``customer_id``."""
    if customer_id not in CUSTOMERS:
        raise InvalidRequest(f"unknown customer {customer_id!r}")
    invoice = INVOICES.get(invoice_id)
    if invoice is None:
        raise InvalidRequest(f"unknown invoice {invoice_id!r}")
    if invoice.customer_id != customer_id:
        raise InvalidRequest(f"invoice {invoice_id} does not belong to customer {customer_id}")
    return invoice
