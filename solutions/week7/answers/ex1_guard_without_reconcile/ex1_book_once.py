
from course.durable import guarded


def book_marta_once(world, trip_id, flight_id):
    """Guarded, but a booking left in flight raises instead of being settled."""
    def fire(*, customer_id, flight_id, idem_key):
        return world.airline.book(customer_id=customer_id, flight_id=flight_id,
                                  idempotency_key=idem_key)

    return guarded(trip_id, f"book_flight:{flight_id}", fire,
                   {"customer_id": "cus_marta", "flight_id": flight_id}, store=world.records)
