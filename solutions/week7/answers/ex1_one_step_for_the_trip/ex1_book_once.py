from course.durable import NeedsReconcile, guarded, reconcile


def book_marta_once(world, trip_id, flight_id):
    """The course's book_once, copied: one step name for the whole trip."""
    def fire(*, customer_id, flight_id, idem_key):
        return world.airline.book(customer_id=customer_id, flight_id=flight_id,
                                  idempotency_key=idem_key)

    args = {"customer_id": "cus_marta", "flight_id": flight_id}
    try:
        return guarded(trip_id, "book_flight", fire, args, store=world.records)
    except NeedsReconcile:  # the last process died mid-booking: same request, same key
        reconcile(trip_id, "book_flight", fire, store=world.records)
        return guarded(trip_id, "book_flight", fire, args, store=world.records)
