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
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from course.base import crashpoints
from course.storage.sqlite import SqliteBacked, transaction
from course.world.catalogue import CURRENCIES, CUSTOMERS, INVOICES, MAX_CENTS, SUBSCRIPTIONS

KEY_MAX_CHARS = 255
KEY_RETENTION = timedelta(hours=24)
SIM_EPOCH = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
FAULTS = ("lose_response", "timeout", "rate_limit")


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


_ERRORS = {cls.__name__: cls for cls in (CardDeclined, InvalidRequest)}

_SCHEMA = """
CREATE TABLE IF NOT EXISTS charges (
    id TEXT PRIMARY KEY, customer_id TEXT NOT NULL, invoice_id TEXT NOT NULL,
    cents INTEGER NOT NULL, currency TEXT NOT NULL, idempotency_key TEXT,
    created_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS refunds (
    id TEXT PRIMARY KEY, customer_id TEXT NOT NULL, invoice_id TEXT NOT NULL,
    cents INTEGER NOT NULL, currency TEXT NOT NULL, idempotency_key TEXT,
    created_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS subscription_changes (
    id TEXT PRIMARY KEY, subscription_id TEXT NOT NULL, action TEXT NOT NULL,
    idempotency_key TEXT, created_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS idempotency_keys (
    key TEXT PRIMARY KEY, fingerprint TEXT NOT NULL, status TEXT NOT NULL,
    response TEXT, created_at TEXT NOT NULL, lease_until REAL NOT NULL,
    fence INTEGER NOT NULL DEFAULT 1);
CREATE TABLE IF NOT EXISTS faults (name TEXT PRIMARY KEY, remaining INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS clock (id INTEGER PRIMARY KEY CHECK (id = 1), offset_s REAL NOT NULL);
CREATE TABLE IF NOT EXISTS counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
INSERT OR IGNORE INTO clock (id, offset_s) VALUES (1, 0);
"""

DECLINING_CUSTOMERS = frozenset({"cus_sam"})  # Sam's card is always declined


class BillingSimulator(SqliteBacked):
    """CloudWave's payment provider. Every process given the same ``path`` shares it."""

    schema = _SCHEMA
    upgrades = (("idempotency_keys", "fence", "INTEGER NOT NULL DEFAULT 1"),)

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

    # ------------------------------------------------------------------ clock
    def now(self) -> datetime:
        """The simulated time (starts at ``SIM_EPOCH``; moves only with :meth:`advance_clock`)."""
        row = self._conn.execute("SELECT offset_s FROM clock WHERE id = 1").fetchone()
        return SIM_EPOCH + timedelta(seconds=row["offset_s"])

    def advance_clock(self, *, hours: float = 0, seconds: float = 0) -> datetime:
        delta = hours * 3600 + seconds
        if delta < 0:
            raise ValueError("the simulated clock only moves forward")
        with transaction(self._conn):
            self._conn.execute("UPDATE clock SET offset_s = offset_s + ? WHERE id = 1", (delta,))
        return self.now()

    # ----------------------------------------------------------------- faults
    def inject(self, fault: str, times: int = 1) -> None:
        """Make the next ``times`` money calls fail with ``fault`` (one of :data:`FAULTS`)."""
        if fault not in FAULTS:
            raise ValueError(f"unknown fault {fault!r}; choose one of {', '.join(FAULTS)}")
        with transaction(self._conn):
            self._conn.execute(
                "INSERT INTO faults (name, remaining) VALUES (?, ?) "
                "ON CONFLICT(name) DO UPDATE SET remaining = excluded.remaining",
                (fault, times),
            )

    def _take_fault(self, name: str) -> bool:
        with transaction(self._conn):
            row = self._conn.execute(
                "SELECT remaining FROM faults WHERE name = ?", (name,)
            ).fetchone()
            if not row or row["remaining"] <= 0:
                return False
            self._conn.execute(
                "UPDATE faults SET remaining = remaining - 1 WHERE name = ?", (name,))
            return True

    # ------------------------------------------------------------- money API
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
        _check_key(idempotency_key)
        _check_amount(cents)
        _check_currency(currency)
        invoice = _check_invoice(customer_id, invoice_id)
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
        _check_key(idempotency_key)
        _check_amount(cents)
        invoice = _check_invoice(customer_id, invoice_id)
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
        _check_key(idempotency_key)
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

    def find_by_key(self, idempotency_key: str) -> dict[str, Any] | None:
        """SIMULATOR CONVENIENCE, not a Stripe feature (Stripe has no lookup by key).

        The stored result for a key, ``None`` if no call with it committed (or it
        was pruned). Raises :class:`KeyInUse` while a call with it is in flight.
        When that call's reservation has run out, the reservation is revoked
        first (its token is bumped, so its caller can never commit) and only then
        is ``None`` answered: "never landed" is then true for good. The lesson,
        the nodes, ``reconcile`` and the crash harness do not use this; they send
        the same request again with the same key instead."""
        _check_key(idempotency_key)
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

    # ---------------------------------------------------------------- tables
    def charges(self) -> list[dict[str, Any]]:
        return [dict(r) for r in self._conn.execute("SELECT * FROM charges ORDER BY id")]

    def refunds(self) -> list[dict[str, Any]]:
        return [dict(r) for r in self._conn.execute("SELECT * FROM refunds ORDER BY id")]

    def subscription_changes(self) -> list[dict[str, Any]]:
        return [dict(r) for r in self._conn.execute(
            "SELECT * FROM subscription_changes ORDER BY id")]

    def keys(self) -> list[dict[str, Any]]:
        return [dict(r) for r in self._conn.execute(
            "SELECT key, status, created_at FROM idempotency_keys ORDER BY created_at, key")]

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

    def _next_id(self, prefix: str) -> str:
        self._conn.execute(
            "INSERT INTO counters (name, value) VALUES (?, 1) "
            "ON CONFLICT(name) DO UPDATE SET value = value + 1", (prefix,))
        value = self._conn.execute(
            "SELECT value FROM counters WHERE name = ?", (prefix,)).fetchone()["value"]
        return f"{prefix}_{value:06d}"


def _replay(stored_text: str) -> dict[str, Any]:
    """A stored response again, marked ``replayed``; a stored error is raised again."""
    stored = json.loads(stored_text)
    if "error" in stored:
        raise _ERRORS.get(stored["error"]["type"], BillingError)(stored["error"]["message"])
    return {**stored, "replayed": True}


def _fingerprint(op: str, params: dict[str, Any]) -> str:
    raw = json.dumps({"op": op, **params}, sort_keys=True)
    return hashlib.sha256(raw.encode()).hexdigest()


def _check_key(key: str | None) -> None:
    if key is None:
        return
    if not isinstance(key, str) or not key:
        raise InvalidRequest(f"an idempotency key must be a non-empty string, got {key!r}")
    if len(key) > KEY_MAX_CHARS:
        raise InvalidRequest(
            f"idempotency key is {len(key)} characters long; the limit is {KEY_MAX_CHARS}"
        )


def _check_amount(cents: Any) -> None:
    if isinstance(cents, bool) or not isinstance(cents, int):
        raise InvalidRequest(
            f"amount must be a whole number of cents (an int), got {cents!r} "
            f"({type(cents).__name__})"
        )
    if cents <= 0:
        raise InvalidRequest(f"amount must be positive, got {cents} cents")
    if cents > MAX_CENTS:
        raise InvalidRequest(f"amount {cents} cents is over the limit of {MAX_CENTS} cents")


def _check_currency(currency: Any) -> None:
    if currency not in CURRENCIES:
        raise InvalidRequest(
            f"unknown currency {currency!r}; use one of {', '.join(sorted(CURRENCIES))}"
        )


def _check_invoice(customer_id: str, invoice_id: str):
    if customer_id not in CUSTOMERS:
        raise InvalidRequest(f"unknown customer {customer_id!r}")
    invoice = INVOICES.get(invoice_id)
    if invoice is None:
        raise InvalidRequest(f"unknown invoice {invoice_id!r}")
    if invoice.customer_id != customer_id:
        raise InvalidRequest(f"invoice {invoice_id} does not belong to customer {customer_id}")
    return invoice


