
from course.durable import NeedsReconcile, guarded, record_id


def book_marta_once(world, trip_id, flight_id):
    """Another step name and arguments; a booking in flight re-sent by hand, as in week 5."""
    def book(*, flight_id, idem_key):
        return world.airline.book(customer_id="cus_marta", flight_id=flight_id,
                                  idempotency_key=idem_key)

    step = f"book {flight_id}"
    try:
        return guarded(trip_id, step, book, {"flight_id": flight_id}, store=world.records)
    except NeedsReconcile as pending:  # the same request, under the key it was first sent with
        answer = book(flight_id=flight_id, idem_key=pending.idem_key)
        world.records.record_result(record_id(trip_id, step), answer)
        return answer
