"""CloudWave's outside world in one folder, and the ledger that audits it.

:class:`World` opens the billing simulator, the mail vendor and the partner
webhook on files inside one directory, so every process that is given the same
directory (a crashed worker, its resumer, the notebook) sees the same world.

:func:`World.ledger` counts, per invoice, how many charges, refunds, emails and
webhook deliveries landed, and flags every double.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from course.base.table import Table
from course.durable.idempotency import SQLiteStore
from course.world.billing import BillingSimulator
from course.world.catalogue import CUSTOMERS, INVOICES
from course.world.mail import MailVendor, VendorWebhook


class World:
    def __init__(self, directory: str | Path, **billing_options: Any) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.billing = BillingSimulator(self.directory / "billing.db", **billing_options)
        self.mail = MailVendor(self.directory / "mail.db")
        self.webhook = VendorWebhook(self.directory / "webhook.db")
        self.records = SQLiteStore(self.directory / "records.db")  # the guard's own table

    def resend(self, step: str) -> Callable[..., Any]:
        """The provider call that sends ``step``'s request again under its own key, in the
        shape :func:`course.durable.guard.reconcile` wants (``fn(**args, idem_key=...)``).

        This is how an in-flight charge is reconciled with a Stripe-like provider: the same
        key with the same parameters returns the stored charge (``replayed=True``), or a 409
        while the first call is still being processed."""
        calls = {"charge": self.billing.charge, "refund": self.billing.refund}
        if step not in calls:
            raise ValueError(f"no provider call to re-send for step {step!r}; "
                             f"steps with one: {', '.join(calls)}")
        call = calls[step]

        def send_again(idem_key: str, **args: Any) -> Any:
            return call(**args, idempotency_key=idem_key)

        return send_again

    def find_mail(self, key: str) -> dict[str, Any] | None:
        """The mail sent under ``key``, found by listing our own messages (a keyless lookup)."""
        return next((m for m in self.mail.sent() if m["email_id"] == key), None)

    def find_listed(self, key: str) -> dict[str, Any] | None:
        """The charge, refund or mail that carries ``key``, found by listing our own objects
        (what you do with a provider that has no keys, or once a key was pruned). It cannot
        see a call still in flight: use it only where :meth:`resend` is impossible."""
        for row in (*self.billing.charges(), *self.billing.refunds()):
            if row["idempotency_key"] == key:
                return row
        return self.find_mail(key)

    def charges_table(self) -> Table:
        """Every charge with the key it was made under: 'every write has a key you can show'."""
        return Table(self.billing.charges(),
                     ["id", "invoice_id", "cents", "currency", "idempotency_key", "created_at"],
                     title="charges")

    def ledger(self) -> Ledger:
        return Ledger.of(self)

    def close(self) -> None:
        self.billing.close()
        self.mail.close()
        self.webhook.close()
        self.records.close()


class Ledger:
    """Counts per invoice. ``doubles()`` lists every invoice that was hit more than once."""

    def __init__(self, rows: list[dict[str, Any]]) -> None:
        self.rows = rows

    @classmethod
    def of(cls, world: World) -> Ledger:
        charges = Counter(c["invoice_id"] for c in world.billing.charges())
        refunds = Counter(r["invoice_id"] for r in world.billing.refunds())
        emails: Counter[str] = Counter()
        for message in world.mail.sent():
            emails[_invoice_in(message["body"]) or message["to"]] += 1
        webhooks = Counter(str(d["payload"].get("invoice_id")) for d in world.webhook.deliveries())
        invoices = sorted(set(charges) | set(refunds) | set(emails) | set(webhooks))
        rows = [
            {"invoice_id": inv,
             "customer": INVOICES[inv].customer_id if inv in INVOICES else "",
             "charges": charges[inv], "refunds": refunds[inv], "emails": emails[inv],
             "webhooks": webhooks[inv]}
            for inv in invoices
        ]
        return cls(rows)

    def count(self, what: str, invoice_id: str | None = None) -> int:
        """Total of ``what`` (charges, refunds, emails, webhooks), for one invoice or all."""
        return sum(r[what] for r in self.rows if invoice_id in (None, r["invoice_id"]))

    def doubles(self) -> list[dict[str, Any]]:
        return [
            {"invoice_id": r["invoice_id"], "what": what, "count": r[what]}
            for r in self.rows for what in ("charges", "refunds", "emails", "webhooks")
            if r[what] > 1
        ]

    def table(self) -> Table:
        return Table(self.rows, ["invoice_id", "customer", "charges", "refunds", "emails",
                                 "webhooks"], title="ledger")

    def _repr_html_(self) -> str:
        return self.table()._repr_html_()

    def __str__(self) -> str:
        return str(self.table())

    __repr__ = __str__


def _invoice_in(body: str) -> str | None:
    """Emails mention the invoice they are about; that is how the ledger files them."""
    for word in body.replace(",", " ").replace(".", " ").split():
        if word in INVOICES:
            return word
    return None


__all__ = ["CUSTOMERS", "INVOICES", "Ledger", "World"]
