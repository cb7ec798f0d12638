from course.durable import NeedsReconcile, guarded, reconcile


def book_marta_once(world, trip_id, flight_id):
    """Book Marta on flight_id at most once for trip_id; return the booking."""
    def fire(*, customer_id, flight_id, idem_key):
        return world.airline.book(customer_id=customer_id, flight_id=flight_id,
                                  idempotency_key=idem_key)

    args = {"customer_id": "cus_marta", "flight_id": flight_id}
    try:
        return guarded("cus_marta", f"book_flight:{flight_id}", fire, args, store=world.records)
    except NeedsReconcile:  # the last process died mid-booking: same request, same key
        reconcile("cus_marta", f"book_flight:{flight_id}", fire, store=world.records)
        return guarded("cus_marta", f"book_flight:{flight_id}", fire, args, store=world.records)
