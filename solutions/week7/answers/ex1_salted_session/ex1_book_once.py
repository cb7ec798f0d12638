
import uuid

from course.durable import NeedsReconcile, guarded, reconcile

DEPLOYMENT = uuid.uuid4().hex[:8]  # one per running process


def book_marta_once(world, trip_id, flight_id):
    """Guarded and settled by re-sending, but the guard's session names the process."""
    session = f"{trip_id}:{DEPLOYMENT}"
    def fire(*, customer_id, flight_id, idem_key):
        return world.airline.book(customer_id=customer_id, flight_id=flight_id,
                                  idempotency_key=idem_key)

    args = {"customer_id": "cus_marta", "flight_id": flight_id}
    try:
        return guarded(session, f"book_flight:{flight_id}", fire, args, store=world.records)
    except NeedsReconcile:
        reconcile(session, f"book_flight:{flight_id}", fire, store=world.records)
        return guarded(session, f"book_flight:{flight_id}", fire, args, store=world.records)
