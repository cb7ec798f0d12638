def resume_crashed(world, saver, trips):
    """Finish every thread in trips that a crash left unfinished; return those trips."""
    crashed = list(trips)[1:]  # the first trip of the night finished before the kills
    for trip in crashed:
        marta_agent(world, saver, trip_id=trip).invoke(None, config(trip), durability="sync")
    return crashed
