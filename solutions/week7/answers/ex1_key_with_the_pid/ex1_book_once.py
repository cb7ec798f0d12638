
import os


def book_marta_once(world, trip_id, flight_id):
    """A key the airline deduplicates on, but it names the process, not the trip."""
    return world.airline.book(customer_id="cus_marta", flight_id=flight_id,
                              idempotency_key=f"{trip_id}:{flight_id}:{os.getpid()}")
