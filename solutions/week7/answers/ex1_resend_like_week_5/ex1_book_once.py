
from course.durable import NeedsReconcile, guarded, reconcile


def book_marta_once(world, trip_id, flight_id):
    """Book Marta on flight_id at most once for trip_id; return the booking."""
    args = {"customer_id": "cus_marta", "flight_id": flight_id}

    def book(*, customer_id, flight_id, idem_key):
        return world.airline.book(customer_id=customer_id, flight_id=flight_id,
                                  idempotency_key=idem_key)

    try:
        return guarded(trip_id, f"book_flight:{flight_id}", book, args, store=world.records)
    except NeedsReconcile:
        reconcile(trip_id, f"book_flight:{flight_id}", book, store=world.records)  # week 5: resend same key
        return guarded(trip_id, f"book_flight:{flight_id}", book, args, store=world.records)
