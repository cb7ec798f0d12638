"""The billing simulator's file: its tables, its simulated clock, its injected faults, its ids.

Promises: everything lives in one SQLite file, so every process given the same path sees
the same charges, refunds, subscription changes, keys, clock and faults. The clock starts
at :data:`SIM_EPOCH` and moves only forward, only with :meth:`ProviderStore.advance_clock`.
A fault injected ``times`` times fires on exactly the next ``times`` checks for it, in
whichever process makes them. Ids are ``prefix_000001``, ``prefix_000002``... per prefix,
never reused. The table readers return rows in id order.

It knows nothing of idempotency keys' rules or of what a call does: those are
:mod:`course.world.billing` and :mod:`course.world.billing_calls`.

May import: :mod:`course.storage.sqlite`.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from course.storage.sqlite import SqliteBacked, transaction

SIM_EPOCH = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
FAULTS = ("lose_response", "timeout", "rate_limit")

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


class ProviderStore(SqliteBacked):
    """The provider's file. :class:`course.world.billing.BillingSimulator` builds on it."""

    schema = _SCHEMA
    upgrades = (("idempotency_keys", "fence", "INTEGER NOT NULL DEFAULT 1"),)

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

    # -------------------------------------------------------------------- ids
    def _next_id(self, prefix: str) -> str:
        """Inside the caller's transaction: the next id for ``prefix``."""
        self._conn.execute(
            "INSERT INTO counters (name, value) VALUES (?, 1) "
            "ON CONFLICT(name) DO UPDATE SET value = value + 1", (prefix,))
        value = self._conn.execute(
            "SELECT value FROM counters WHERE name = ?", (prefix,)).fetchone()["value"]
        return f"{prefix}_{value:06d}"
