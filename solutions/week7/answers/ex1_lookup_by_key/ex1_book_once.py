
from course.durable import NeedsReconcile, guarded, reconcile


def book_marta_once(world, trip_id, flight_id):
    """Settles a booking in flight by looking its key up (as week 7 once taught)."""
    def fire(*, customer_id, flight_id, idem_key):
        return world.airline.book(customer_id=customer_id, flight_id=flight_id,
                                  idempotency_key=idem_key)

    args = {"customer_id": "cus_marta", "flight_id": flight_id}
    try:
        return guarded(trip_id, f"book_flight:{flight_id}", fire, args, store=world.records)
    except NeedsReconcile:
        reconcile(trip_id, f"book_flight:{flight_id}", store=world.records,
                  lookup=world.airline.find_by_key)
        return guarded(trip_id, f"book_flight:{flight_id}", fire, args, store=world.records)
