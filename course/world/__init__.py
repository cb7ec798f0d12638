"""CloudWave's outside world: the catalogue, the bank, the mail vendor, the ledger.

May import: :mod:`course.base`, :mod:`course.storage`, :mod:`course.durable`.
Everything here lives in files inside one folder, so a crashed worker, its
resumer and the notebook all see the same world.

- :mod:`course.world.catalogue`: customers, subscriptions, invoices (fixed data).
- :mod:`course.world.billing`: :class:`BillingSimulator`, a payment provider with
  Stripe-like idempotency keys, and its errors (it re-exports its parts:
  ``billing_errors``, ``billing_requests``, ``billing_store``, ``billing_calls``).
- :mod:`course.world.mail`: :class:`MailVendor` (deduplicates on a message id)
  and :class:`VendorWebhook` (a partner endpoint that ignores keys).
- :mod:`course.world.world`: :class:`World` (one folder: bank, mail, webhook and
  the guard's record table) and :class:`Ledger` (counts per invoice, flags doubles).
"""

from course.world.billing import (
    BillingError,
    BillingSimulator,
    CardDeclined,
    IdempotencyKeyMismatch,
    InvalidRequest,
    KeyInUse,
    ProviderTimeout,
    RateLimited,
    ReservationSuperseded,
    ResponseLost,
)
from course.world.catalogue import CUSTOMERS, INVOICES, SUBSCRIPTIONS, subscription_of
from course.world.mail import MailVendor, VendorWebhook
from course.world.world import Ledger, World

__all__ = ["CUSTOMERS", "INVOICES", "SUBSCRIPTIONS", "BillingError", "BillingSimulator",
           "CardDeclined", "IdempotencyKeyMismatch", "InvalidRequest", "KeyInUse", "Ledger",
           "MailVendor", "ProviderTimeout", "RateLimited", "ReservationSuperseded", "ResponseLost",
           "VendorWebhook",
           "World", "subscription_of"]
