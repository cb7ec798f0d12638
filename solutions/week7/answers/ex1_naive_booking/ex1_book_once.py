
def book_marta_once(world, trip_id, flight_id):
    """The tool as Marta's agent had it: book and charge, every time."""
    return world.airline.book(customer_id="cus_marta", flight_id=flight_id)
