"""Every answer the billing simulator can give instead of a result.

Promises: each error says whether a retry is safe (``retryable``), whether its call's
effect happened (``effect_landed``: ``False`` certainly not, ``True`` it did, ``None``
nobody knows), and which kind :func:`course.durable.recovery.classify_error` gives it
(``recovery_kind``), so the floor below classifies them without importing them.
:func:`stored_error` turns an error stored under a key back into the same class.

Imports nothing of the course. :mod:`course.world.billing` re-exports every name.
"""

from __future__ import annotations

from typing import Any


class BillingError(Exception):
    """Every error the provider returns. ``retryable`` says whether trying again is safe."""

    retryable = False
    recovery_kind: str | None = None  # the kind course.durable.recovery gives this error
    code = "billing_error"
    # Did this call's effect happen? False: certainly not (a refusal). True: it did.
    # None: nobody knows (a timeout). The guard clears its intent only on False.
    effect_landed: bool | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"type": type(self).__name__, "code": self.code, "message": str(self)}


class InvalidRequest(BillingError):
    """The request was malformed; nothing was stored or charged."""

    recovery_kind = "invalid_request"
    code = "invalid_request"
    effect_landed = False


class IdempotencyKeyMismatch(BillingError):
    """A key was reused with different parameters; nothing was charged."""

    recovery_kind = "invalid_request"
    code = "idempotency_key_mismatch"
    effect_landed = False


class KeyInUse(BillingError):
    """Another request with the same key is still being processed. Retry later."""

    recovery_kind = "rate_limit"
    retryable = True
    code = "idempotency_key_in_use"
    effect_landed = False


class ReservationSuperseded(KeyInUse):
    """This caller's reservation of the key ran out and another call with the same key took it
    over; this caller's late commit was rolled back (it charged nothing)."""

    code = "idempotency_key_superseded"
    effect_landed = None  # not this call's, but the key's effect may land through the other one


class RateLimited(BillingError):
    """HTTP 429. Nothing happened; retry after a pause."""

    recovery_kind = "rate_limit"
    retryable = True
    code = "rate_limited"
    effect_landed = False


class ProviderTimeout(BillingError):
    """No answer arrived. The call may or may not have happened: only a key makes a retry safe."""

    recovery_kind = "timeout"
    retryable = True
    code = "timeout"


class ResponseLost(ProviderTimeout):
    """The provider committed the call, but the response never reached the caller (the lost 200)."""

    code = "response_lost"
    effect_landed = True


class CardDeclined(BillingError):
    """The card was declined. Stored under the key and replayed like a success."""

    recovery_kind = "invalid_request"
    code = "card_declined"
    effect_landed = False


_STORED = {cls.__name__: cls for cls in (CardDeclined, InvalidRequest)}


def stored_error(stored: dict[str, Any]) -> BillingError:
    """The error a key's stored ``{"type", "code", "message"}`` stands for, to raise again
    (:class:`BillingError` for a type that is never stored)."""
    return _STORED.get(stored["type"], BillingError)(stored["message"])
