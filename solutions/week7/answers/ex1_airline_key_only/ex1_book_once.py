
from course.durable import idem_key


def book_marta_once(world, trip_id, flight_id):
    """A stable key the airline deduplicates on, and no record of our own."""
    args = {"customer_id": "cus_marta", "flight_id": flight_id}
    return world.airline.book(**args, idempotency_key=idem_key(trip_id, "book_flight", args))
