"""Marta's airline: flights to search, seats to book, fares charged, under Stripe-like keys.

:class:`Airline` is the course's billing simulator with one more call, :meth:`Airline.book`:
a booking writes a seat *and* the fare's charge in one transaction, through the
simulator's own idempotency machinery (same key + same parameters → the stored
booking again, ``replayed=True``; same key + other parameters → an error; a key
in flight → ``KeyInUse``). There is no second copy of the key rules here.

:class:`TravelWorld` puts the airline and the guard's record table in one
folder, so a process that is SIGKILLed and the process that resumes it see the
same bookings; :meth:`TravelWorld.ledger` counts bookings and charges per
passenger and flags doubles.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from course.base.table import Table
from course.durable.idempotency import SQLiteStore
from course.world.billing import BillingSimulator, InvalidRequest
from course.world.catalogue import CUSTOMERS


@dataclass(frozen=True)
class Flight:
    id: str
    origin: str
    destination: str
    date: str
    departs: str
    cents: int
    currency: str = "eur"


FLIGHTS = {f.id: f for f in [
    Flight("VY1042", "MAD", "BCN", "2026-03-14", "10:42", 8900),
    Flight("IB2718", "MAD", "BCN", "2026-03-14", "13:05", 11200),
    Flight("UX7001", "MAD", "BCN", "2026-03-14", "19:30", 7400),
    Flight("VY1010", "BCN", "MAD", "2026-03-17", "18:15", 9100),
]}

_BOOKINGS = """
CREATE TABLE IF NOT EXISTS bookings (
    id TEXT PRIMARY KEY, customer_id TEXT NOT NULL, flight_id TEXT NOT NULL,
    charge_id TEXT NOT NULL, idempotency_key TEXT, created_at TEXT NOT NULL);
"""


class Airline(BillingSimulator):
    """The billing simulator plus flights: ``search`` reads, ``book`` seats and charges."""

    schema = BillingSimulator.schema + _BOOKINGS

    def search(self, origin: str, destination: str, date: str) -> list[dict[str, Any]]:
        """Flights from ``origin`` to ``destination`` on ``date``, cheapest first (no effect)."""
        found = [f for f in FLIGHTS.values()
                 if (f.origin, f.destination, f.date) == (origin.upper(), destination.upper(),
                                                          date)]
        return [vars(f) for f in sorted(found, key=lambda f: f.cents)]

    def book(self, *, customer_id: str, flight_id: str,
             idempotency_key: str | None = None) -> dict[str, Any]:
        """Book a seat on ``flight_id`` for ``customer_id`` and charge the fare, together."""
        if customer_id not in CUSTOMERS:
            raise InvalidRequest(f"no such customer: {customer_id!r}")
        if flight_id not in FLIGHTS:
            raise InvalidRequest(f"no such flight: {flight_id!r}; search for flights first")
        flight = FLIGHTS[flight_id]
        params = {"customer_id": customer_id, "flight_id": flight_id}

        def commit() -> dict[str, Any]:
            charge_id = self._next_id("ch")
            booking_id = self._next_id("bk")
            now = self.now().isoformat()
            self._conn.execute(
                "INSERT INTO charges VALUES (?, ?, ?, ?, ?, ?, ?)",
                (charge_id, customer_id, f"fare:{flight_id}", flight.cents, flight.currency,
                 idempotency_key, now))
            self._conn.execute(
                "INSERT INTO bookings VALUES (?, ?, ?, ?, ?, ?)",
                (booking_id, customer_id, flight_id, charge_id, idempotency_key, now))
            return {"id": booking_id, "object": "booking", **params, "charge_id": charge_id,
                    "cents": flight.cents, "currency": flight.currency,
                    "idempotency_key": idempotency_key}

        return self._call("book_flight", params, idempotency_key, commit)

    def bookings(self) -> list[dict[str, Any]]:
        return [dict(r) for r in self._conn.execute("SELECT * FROM bookings ORDER BY id")]


class TravelWorld:
    """The airline and the guard's record table, in one folder every process can open."""

    def __init__(self, directory: str | Path, **airline_options: Any) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.airline = Airline(self.directory / "airline.db", **airline_options)
        self.records = SQLiteStore(self.directory / "records.db")

    def bookings_table(self) -> Table:
        """Every booking with the key it was made under."""
        return Table(self.airline.bookings(), ["id", "customer_id", "flight_id", "charge_id",
                                               "idempotency_key"], title="bookings")

    def ledger(self) -> Table:
        """Per passenger: bookings and fare charges. ``double`` is True where either is > 1."""
        bookings = Counter(b["customer_id"] for b in self.airline.bookings())
        charges = Counter(c["customer_id"] for c in self.airline.charges())
        rows = [{"customer": who, "bookings": bookings[who], "charges": charges[who],
                 "double": bookings[who] > 1 or charges[who] > 1}
                for who in sorted(set(bookings) | set(charges))]
        return Table(rows, ["customer", "bookings", "charges", "double"], title="ledger")

    def count(self, what: str = "bookings", customer_id: str = "cus_marta") -> int:
        """How many ``bookings`` or ``charges`` landed for ``customer_id``."""
        if what not in ("bookings", "charges"):
            raise ValueError(f"count 'bookings' or 'charges', not {what!r}")
        rows = self.airline.bookings() if what == "bookings" else self.airline.charges()
        return sum(1 for r in rows if r["customer_id"] == customer_id)

    def close(self) -> None:
        self.airline.close()
        self.records.close()
