"""Booking Marta's flight: the naive call and the guarded call, shared by both frameworks.

Neither Deep Agents nor the Claude Agent SDK knows that booking a seat is not
idempotent, so the protection lives here, in one function both frameworks call:

- :func:`book_naive` books and charges every time it is called;
- :func:`book_once` books through :func:`course.durable.guarded` under the trip's
  id (intent recorded before the call, the result after it lands, the key sent
  to the airline), and settles a booking that was in flight when the last
  process died with :func:`course.durable.reconcile` before going on: the same
  request is sent again with the same key, and the airline answers with the
  booking it already made (``replayed=True``) or, if it never got the first
  request, makes it now, once. Nothing here looks a booking up by its key: a
  real provider (Stripe, for one) has no such call.

Both pass the crash points ``book_flight/before_effect`` and
``book_flight/after_effect`` (the booking and its charge are committed at the
airline, nobody has recorded it yet), so a crash harness can kill the process
exactly there. Outside a harness the points do nothing.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from course.base import crashpoints
from course.durable.guard import NeedsReconcile, guarded, reconcile
from course.travel.airline import TravelWorld

Book = Callable[..., dict[str, Any]]
"""A booking function: ``book(world, trip_id, flight_id) -> booking``."""

MARTA = "cus_marta"
TRIP = "marta-1042"
STEP = "book_flight"


def book_naive(world: TravelWorld, trip_id: str, flight_id: str,
               customer_id: str = MARTA) -> dict[str, Any]:
    """Book and charge, no key, no record: what Marta's agent did (``trip_id`` is unused)."""
    crashpoints.reach(STEP, "before_effect")
    booking = world.airline.book(customer_id=customer_id, flight_id=flight_id)
    crashpoints.reach(STEP, "after_effect")
    return booking


def book_once(world: TravelWorld, trip_id: str, flight_id: str,
              customer_id: str = MARTA) -> dict[str, Any]:
    """Book at most once per trip, across crashes, resumes and retries."""
    def fire(*, customer_id: str, flight_id: str, idem_key: str) -> dict[str, Any]:
        crashpoints.reach(STEP, "before_effect")
        booking = world.airline.book(customer_id=customer_id, flight_id=flight_id,
                                     idempotency_key=idem_key)
        crashpoints.reach(STEP, "after_effect")
        return booking

    args = {"customer_id": customer_id, "flight_id": flight_id}
    try:
        return guarded(trip_id, STEP, fire, args, store=world.records)
    except NeedsReconcile:  # the last process died mid-booking: send the same request again
        reconcile(trip_id, STEP, fire, store=world.records)  # the same key: a replay, not a seat
        return guarded(trip_id, STEP, fire, args, store=world.records)


def describe(booking: dict[str, Any]) -> str:
    """What the tool tells the model: a short JSON line."""
    keep = ("id", "flight_id", "charge_id", "cents", "currency", "replayed")
    return json.dumps({k: booking[k] for k in keep if k in booking})
