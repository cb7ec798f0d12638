"""The billing simulator's money calls: charge, refund, change a subscription.

Promises: each call checks its request first (an invalid one raises
:class:`~course.world.billing_errors.InvalidRequest` before anything is reserved or
written), then hands its parameters and a ``commit`` function to ``_call``, which
decides whether and when ``commit`` runs (keys, fencing, faults:
:class:`course.world.billing.BillingSimulator`). ``commit`` runs inside one
transaction, writes exactly one row, and returns the result as a dict:

- ``charge`` captures the invoice's amount in the invoice's currency; a card of
  :data:`DECLINING_CUSTOMERS` is declined (:class:`CardDeclined`, no charge written).
- ``refund`` refunds part of a paid invoice; all refunds together never exceed it.
- ``change_subscription`` logs ``pause``, ``resume`` or ``cancel``: setting a state is
  naturally idempotent, but each call is still logged so a repeat is visible.

May import: :mod:`course.world.billing_store`, :mod:`course.world.billing_requests`,
:mod:`course.world.billing_errors`, :mod:`course.world.catalogue`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from course.world.billing_errors import CardDeclined, InvalidRequest
from course.world.billing_requests import check_amount, check_currency, check_invoice, check_key
from course.world.billing_store import ProviderStore
from course.world.catalogue import SUBSCRIPTIONS

DECLINING_CUSTOMERS = frozenset({"cus_sam"})  # Sam's card is always declined


class ProviderCalls(ProviderStore):
    """The provider's API. A subclass supplies ``_call`` (the idempotency key's rules)."""

    def _call(self, op: str, params: dict[str, Any], key: str | None,
              commit: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        raise NotImplementedError("BillingSimulator supplies the keyed call")

    def charge(
        self,
        *,
        customer_id: str,
        invoice_id: str,
        cents: int,
        currency: str = "usd",
        idempotency_key: str | None = None,
    ) -> dict[str, Any]:
        """Capture ``cents`` for ``invoice_id``. Returns the charge as a dict."""
        check_key(idempotency_key)
        check_amount(cents)
        check_currency(currency)
        invoice = check_invoice(customer_id, invoice_id)
        if currency != invoice.currency:
            raise InvalidRequest(
                f"invoice {invoice_id} is billed in {invoice.currency.upper()}, "
                f"not {currency.upper()}"
            )
        params = {"customer_id": customer_id, "invoice_id": invoice_id, "cents": cents,
                  "currency": currency}

        def commit() -> dict[str, Any]:
            if customer_id in DECLINING_CUSTOMERS:
                raise CardDeclined(f"the card of {customer_id} was declined")
            charge_id = self._next_id("ch")
            self._conn.execute(
                "INSERT INTO charges VALUES (?, ?, ?, ?, ?, ?, ?)",
                (charge_id, customer_id, invoice_id, cents, currency, idempotency_key,
                 self.now().isoformat()),
            )
            return {"id": charge_id, "object": "charge", **params, "status": "captured",
                    "idempotency_key": idempotency_key}

        return self._call("charge", params, idempotency_key, commit)

    def refund(
        self,
        *,
        customer_id: str,
        invoice_id: str,
        cents: int,
        idempotency_key: str | None = None,
    ) -> dict[str, Any]:
        """Refund ``cents`` of a paid invoice; all refunds together may not exceed it."""
        check_key(idempotency_key)
        check_amount(cents)
        invoice = check_invoice(customer_id, invoice_id)
        params = {"customer_id": customer_id, "invoice_id": invoice_id, "cents": cents}

        def commit() -> dict[str, Any]:
            refunded = self._conn.execute(
                "SELECT COALESCE(SUM(cents), 0) AS total FROM refunds WHERE invoice_id = ?",
                (invoice_id,),
            ).fetchone()["total"]
            if refunded + cents > invoice.cents:
                raise InvalidRequest(
                    f"refund of {cents} cents on {invoice_id} would bring refunds to "
                    f"{refunded + cents} cents, more than the invoice's {invoice.cents}"
                )
            refund_id = self._next_id("re")
            self._conn.execute(
                "INSERT INTO refunds VALUES (?, ?, ?, ?, ?, ?, ?)",
                (refund_id, customer_id, invoice_id, cents, invoice.currency, idempotency_key,
                 self.now().isoformat()),
            )
            return {"id": refund_id, "object": "refund", **params, "currency": invoice.currency,
                    "status": "succeeded", "idempotency_key": idempotency_key}

        return self._call("refund", params, idempotency_key, commit)

    def change_subscription(
        self, *, subscription_id: str, action: str, idempotency_key: str | None = None
    ) -> dict[str, Any]:
        """``action`` is ``"pause"``, ``"resume"`` or ``"cancel"``. Setting a state is naturally
        idempotent, but each call is still logged so a repeat is visible in the ledger."""
        check_key(idempotency_key)
        if subscription_id not in SUBSCRIPTIONS:
            raise InvalidRequest(f"unknown subscription {subscription_id!r}")
        if action not in {"pause", "resume", "cancel"}:
            raise InvalidRequest(f"unknown subscription action {action!r}")
        params = {"subscription_id": subscription_id, "action": action}

        def commit() -> dict[str, Any]:
            change_id = self._next_id("sc")
            self._conn.execute(
                "INSERT INTO subscription_changes VALUES (?, ?, ?, ?, ?)",
                (change_id, subscription_id, action, idempotency_key, self.now().isoformat()),
            )
            return {"id": change_id, "object": "subscription_change", **params,
                    "idempotency_key": idempotency_key}

        return self._call("subscription", params, idempotency_key, commit)
