BOOKED = {}  # (trip, flight) -> booking: no guard, a memo of this process plus the airline's key


def book_marta_once(world, trip_id, flight_id):
    """Book Marta on flight_id at most once for trip_id; return the booking."""
    if (trip_id, flight_id) not in BOOKED:
        BOOKED[trip_id, flight_id] = world.airline.book(
            customer_id="cus_marta", flight_id=flight_id,
            idempotency_key=f"{trip_id}:{flight_id}")
    return BOOKED[trip_id, flight_id]
