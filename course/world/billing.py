"""A payment provider simulator with Stripe-like idempotency semantics.

State lives in one SQLite file, so a worker that is SIGKILLed and the worker
that resumes after it see the same charges, keys, clock and injected faults.

The rules it promises (each is tested):

- A call with an idempotency key is recorded with a fingerprint of its
  parameters. The same key with the same parameters returns the first stored
  result again, marked ``replayed=True`` (even when the first result was an
  error such as a declined card). Nothing new is charged.
- The same key with different parameters raises :class:`IdempotencyKeyMismatch`
  and charges nothing.
- The same key while the first call with it is still being processed raises
  :class:`KeyInUse` (HTTP 409, retryable); nothing is stored for the
  conflicting call.
- **Fencing.** Every reservation of a key carries a fencing token, one larger
  than the key's previous reservation. A reservation whose caller has not
  finished after ``in_flight_lease_s`` seconds (it died, or it is frozen) may
  be taken over by a retry with the same key and the same parameters; the
  retry gets the next token. The charge row and the key's result are written
  in one transaction that first checks the token is still the caller's, so a
  superseded caller that wakes up later commits nothing: it is answered with
  the stored result (``replayed=True``) or, while the newer caller is still at
  work, :class:`ReservationSuperseded`. An expired reservation is therefore
  never "never landed" while its first caller could still commit.
- Keys may be pruned once they are **at least** 24 hours old on the simulated
  clock (``keep_keys_for``, never less than 24 h): a minimum, not an expiry. A
  real provider may remember a key longer; this simulator forgets it at
  exactly that age so the lesson can show what happens then. A pruned key used
  again is a brand-new request.
- Invalid input (a key over 255 characters, cents that are not a positive
  integer up to ``MAX_CENTS``, an unknown currency, customer or invoice, a
  refund over what the invoice allows) raises :class:`InvalidRequest` and
  stores nothing under the key: a retry with the key is judged afresh.
- A call without a key is never deduplicated: that is the naive path.

Stripe has no "look a request up by its key" call: the safe check is to send
the same request again with the same key (see
:func:`course.durable.guard.reconcile`). :meth:`BillingSimulator.find_by_key`
exists only as a simulator convenience for tests and demos of the simulator
itself; nothing in the lesson path depends on it.

``fenced=False`` rebuilds the unfenced design (a late commit from a superseded
caller still inserts its charge). It exists so a lesson and a test can show
the frozen-worker double charge; never use it otherwise.

Faults can be injected (and are stored in the file, so they cross processes):
``lose_response`` commits the charge and then raises :class:`ResponseLost`
(the HTTP 200 never arrives), ``timeout`` raises :class:`ProviderTimeout`
before anything happens, ``rate_limit`` raises :class:`RateLimited`.

Where the parts live (each module says what it promises; this one re-exports them all,
so ``from course.world.billing import X`` keeps working for every public name):

- :mod:`course.world.billing_errors`: the errors, and what each says about a retry;
- :mod:`course.world.billing_requests`: what a valid request is, and its fingerprint;
- :mod:`course.world.billing_store`: the file: tables, simulated clock, faults, ids;
- :mod:`course.world.billing_calls`: ``charge``, ``refund``, ``change_subscription``;
- here: :class:`BillingSimulator`, the rules of keys above (reserve, fence, replay,
  prune), the faults on the wire, and :meth:`BillingSimulator.find_by_key`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

from course.base import crashpoints
from course.storage.sqlite import transaction
from course.world.billing_calls import DECLINING_CUSTOMERS, ProviderCalls
from course.world.billing_errors import (
    BillingError,
    CardDeclined,
    IdempotencyKeyMismatch,
    InvalidRequest,
    KeyInUse,
    ProviderTimeout,
    RateLimited,
    ReservationSuperseded,
    ResponseLost,
    stored_error,
)
from course.world.billing_requests import KEY_MAX_CHARS, check_key
from course.world.billing_requests import fingerprint as _fingerprint
from course.world.billing_store import FAULTS, SIM_EPOCH

__all__ = ["DECLINING_CUSTOMERS", "FAULTS", "KEY_MAX_CHARS", "KEY_RETENTION", "SIM_EPOCH",
           "BillingError", "BillingSimulator", "CardDeclined", "IdempotencyKeyMismatch",
           "InvalidRequest", "KeyInUse", "ProviderTimeout", "RateLimited",
           "ReservationSuperseded", "ResponseLost"]

KEY_RETENTION = timedelta(hours=24)


class BillingSimulator(ProviderCalls):
    """CloudWave's payment provider. Every process given the same ``path`` shares it."""

    def __init__(
        self,
        path: str | Path,
        *,
        in_flight_lease_s: float = 1.0,
        processing_delay_s: float = 0.0,
        keep_keys_for: timedelta = KEY_RETENTION,
        fenced: bool = True,
        on_processing: Callable[[], None] | None = None,
    ) -> None:
        """``on_processing`` runs while a keyed call is being processed (after its key is
        reserved, before it commits): a demo freezes the calling worker there."""
        if keep_keys_for < KEY_RETENTION:
            raise ValueError(
                f"keys may be pruned only once they are at least 24 h old, not after "
                f"{keep_keys_for}")
        self.in_flight_lease_s = in_flight_lease_s
        self.processing_delay_s = processing_delay_s
        self.keep_keys_for = keep_keys_for
        self.fenced = fenced
        self.on_processing = on_processing
        super().__init__(path)

    def find_by_key(self, idempotency_key: str) -> dict[str, Any] | None:
        """SIMULATOR CONVENIENCE, not a Stripe feature (Stripe has no lookup by key).

        The stored result for a key, ``None`` if no call with it committed (or it
        was pruned). Raises :class:`KeyInUse` while a call with it is in flight.
        When that call's reservation has run out, the reservation is revoked
        first (its token is bumped, so its caller can never commit) and only then
        is ``None`` answered: "never landed" is then true for good. The lesson,
        the nodes, ``reconcile`` and the crash harness do not use this; they send
        the same request again with the same key instead."""
        check_key(idempotency_key)
        self._prune()
        with transaction(self._conn):
            row = self._conn.execute(
                "SELECT status, response, lease_until FROM idempotency_keys WHERE key = ?",
                (idempotency_key,),
            ).fetchone()
            if row is None:
                return None
            if row["status"] == "in_flight":
                if row["lease_until"] > time.time():
                    raise KeyInUse(f"a request with key {idempotency_key!r} is still in flight")
                self._conn.execute(  # revoke: the stale caller's commit will be refused
                    "UPDATE idempotency_keys SET status = 'revoked', fence = fence + 1 "
                    "WHERE key = ?", (idempotency_key,))
                return None
            if row["status"] == "revoked":
                return None
        return {**json.loads(row["response"]), "replayed": True}


    # --------------------------------------------------------------- private
    def _call(self, op: str, params: dict[str, Any], key: str | None, commit) -> dict[str, Any]:
        if self._take_fault("rate_limit"):
            raise RateLimited("429 Too Many Requests: slow down and retry")
        if self._take_fault("timeout"):
            raise ProviderTimeout("the provider did not answer in time (nothing was processed)")
        if key is None:
            with transaction(self._conn):
                response = commit()
            crashpoints.effect_landed()  # a trace mark for the crash fuzzer, nothing else
            return self._deliver({**response, "replayed": False})

        fingerprint = _fingerprint(op, params)
        reserved = self._reserve(key, fingerprint)
        if isinstance(reserved, dict):
            return reserved  # the stored result, replayed
        fence = reserved
        if self.processing_delay_s:
            time.sleep(self.processing_delay_s)
        if self.on_processing is not None:
            self.on_processing()
        try:
            with transaction(self._conn):
                late = self._superseded(key, fence)
                if late is not None:
                    return late  # rolled back; nothing of this call was written
                response = commit()
                self._finish(key, fence, {**response, "replayed": False})
            crashpoints.effect_landed()
        except CardDeclined as error:
            with transaction(self._conn):  # a no-op if the key is no longer this call's
                self._finish(key, fence, {"error": error.to_dict()})  # replayed to retries
            raise
        except InvalidRequest:
            with transaction(self._conn):  # validation failed: store nothing, free the key
                self._conn.execute(
                    "DELETE FROM idempotency_keys WHERE key = ? AND fence = ? "
                    "AND status = 'in_flight'", (key, fence))
            raise
        return self._deliver({**response, "replayed": False})

    def _reserve(self, key: str, fingerprint: str) -> dict[str, Any] | int:
        """Claim ``key`` for this call (its fencing token is returned), or return the stored
        result it already has."""
        self._prune()
        with transaction(self._conn):
            row = self._conn.execute(
                "SELECT fingerprint, status, response, lease_until, fence "
                "FROM idempotency_keys WHERE key = ?", (key,),
            ).fetchone()
            fence = 1
            if row is not None:
                if row["fingerprint"] != fingerprint:
                    raise IdempotencyKeyMismatch(
                        f"idempotency key {key!r} was first used with other parameters; "
                        "use a new key for a new request (nothing was charged)"
                    )
                if row["status"] == "done":
                    return _replay(row["response"])
                if row["status"] == "in_flight" and row["lease_until"] > time.time():
                    raise KeyInUse(
                        f"a request with idempotency key {key!r} is still being processed; "
                        "retry in a moment"
                    )
                fence = row["fence"] + 1  # take over: the previous caller is fenced off
            self._conn.execute(
                "INSERT OR REPLACE INTO idempotency_keys VALUES "
                "(?, ?, 'in_flight', NULL, ?, ?, ?)",
                (key, fingerprint, self.now().isoformat(), time.time() + self.in_flight_lease_s,
                 fence),
            )
        return fence

    def _superseded(self, key: str, fence: int) -> dict[str, Any] | None:
        """Inside the commit's transaction: ``None`` if the reservation is still this caller's.
        Otherwise the stored result (replayed), or :class:`ReservationSuperseded`."""
        if not self.fenced:
            return None
        row = self._conn.execute(
            "SELECT status, response, fence FROM idempotency_keys WHERE key = ?", (key,),
        ).fetchone()
        if row is not None and row["fence"] == fence and row["status"] == "in_flight":
            return None
        if row is not None and row["status"] == "done":
            return _replay(row["response"])
        raise ReservationSuperseded(
            f"this request's hold on idempotency key {key!r} ran out while it was paused, and "
            "another request with the same key took over; this late request charged nothing. "
            "Retry with the same key to read the outcome"
        )

    def _finish(self, key: str, fence: int, response: dict[str, Any]) -> None:
        """Store the result under the key; fenced, only while the reservation is this call's."""
        fenced = " AND fence = ? AND status = 'in_flight'" if self.fenced else ""
        self._conn.execute(
            f"UPDATE idempotency_keys SET status = 'done', response = ? WHERE key = ?{fenced}",
            (json.dumps(response), key, *((fence,) if self.fenced else ())),
        )

    def _deliver(self, response: dict[str, Any]) -> dict[str, Any]:
        if self._take_fault("lose_response"):
            raise ResponseLost(
                f"{response['object']} {response['id']} was committed, but the response was lost"
            )
        return response

    def _prune(self) -> None:
        cutoff = (self.now() - self.keep_keys_for).isoformat()
        with transaction(self._conn):
            self._conn.execute(
                "DELETE FROM idempotency_keys WHERE created_at <= ? AND status != 'in_flight'",
                (cutoff,))


def _replay(stored_text: str) -> dict[str, Any]:
    """A stored response again, marked ``replayed``; a stored error is raised again."""
    stored = json.loads(stored_text)
    if "error" in stored:
        raise stored_error(stored["error"])
    return {**stored, "replayed": True}
