"""A catalogue read that times out now and then, and the naive "sleep and retry" loop.

Promises:
- :class:`CatalogueTimeout` is a ``TimeoutError`` (so LangGraph's default
  ``RetryPolicy`` does *not* retry it: ``TimeoutError`` is an ``OSError``, which
  the default ``retry_on`` leaves alone; name it in ``retry_on``).
- :class:`FlakyCatalogue` looks invoices up in CloudWave's catalogue and raises
  :class:`CatalogueTimeout` on its first ``timeouts`` reads; ``calls`` counts every
  read, failed or not. It lives in memory: a retry policy runs in one process.
- :func:`retrieve_from` is the ``retrieve`` node reading through such a catalogue
  (an unknown invoice is a ``ValueError``, which no retry can fix).
- :func:`refund_then_read` is the trap: a node that refunds first (``cents``, or the
  whole invoice) and reads the catalogue after, so a retried read repeats the refund.
- :func:`sleep_and_retry` is the loop people write the night before a release:
  call, catch, sleep, call again. It returns the first answer that arrives.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from course.world.billing import ProviderTimeout
from course.world.catalogue import CUSTOMERS, INVOICES, Invoice


class CatalogueTimeout(TimeoutError):
    """The catalogue did not answer in time. Nothing changed: reading again is safe."""


class FlakyCatalogue:
    """CloudWave's invoice catalogue behind a slow network: the first ``timeouts`` reads fail."""

    def __init__(self, timeouts: int = 0) -> None:
        if isinstance(timeouts, bool) or not isinstance(timeouts, int) or timeouts < 0:
            raise ValueError(f"timeouts is how many reads fail first: 0 or more; got {timeouts!r}")
        self.timeouts = timeouts
        self.calls = 0

    def invoice(self, invoice_id: str) -> Invoice | None:
        """The invoice, ``None`` if there is no such invoice, or :class:`CatalogueTimeout`."""
        self.calls += 1
        if self.calls <= self.timeouts:
            raise CatalogueTimeout(f"the catalogue did not answer (read {self.calls})")
        return INVOICES.get(invoice_id)

    def __repr__(self) -> str:
        return f"FlakyCatalogue(timeouts={self.timeouts}, calls={self.calls})"


def retrieve_from(catalogue: FlakyCatalogue):
    """The ``retrieve`` node, reading the invoice through ``catalogue``."""

    def retrieve(state: dict[str, Any], world: Any) -> dict[str, Any]:
        invoice = catalogue.invoice(state.get("invoice_id", ""))
        if invoice is None:
            raise ValueError(f"no such invoice: {state.get('invoice_id')!r}")
        customer = CUSTOMERS[invoice.customer_id]
        return {"customer_id": customer.id, "customer_email": customer.email,
                "cents": invoice.cents, "currency": invoice.currency, "log": ["retrieve"]}

    return retrieve


def refund_then_read(catalogue: FlakyCatalogue, cents: int | None = None):
    """A ``refund`` node that refunds ``cents`` (default: the whole invoice; no key), then
    reads the catalogue for the receipt."""

    def refund(state: dict[str, Any], world: Any) -> dict[str, Any]:
        amount = state["cents"] if cents is None else cents
        result = world.billing.refund(customer_id=state["customer_id"],
                                      invoice_id=state["invoice_id"], cents=amount)
        catalogue.invoice(state["invoice_id"])  # the read that may time out, after the write
        return {"refund": result, "log": ["refund"]}

    return refund


Errors = type[BaseException] | tuple[type[BaseException], ...]


def sleep_and_retry(call: Callable[[], Any], *, tries: int = 3, pause_s: float = 0.05,
                    retry_on: Errors = ProviderTimeout) -> Any:
    """Call ``call()``; on ``retry_on``, sleep and call again, up to ``tries`` calls in all.

    Returns the first answer; re-raises the last error when every try failed.
    """
    if isinstance(tries, bool) or not isinstance(tries, int) or tries < 1:
        raise ValueError(f"tries must be a whole number, 1 or more; got {tries!r}")
    for attempt in range(1, tries + 1):
        try:
            return call()
        except retry_on:
            if attempt == tries:
                raise
            time.sleep(pause_s)
    raise AssertionError("unreachable: the last try returns or raises")
