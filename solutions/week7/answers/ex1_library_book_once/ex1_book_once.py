
from course.travel import book_once


def book_marta_once(world, trip_id, flight_id):
    """The course's own guarded booking, under the exercise's name."""
    return book_once(world, trip_id, flight_id)
