def resume_crashed(world, saver, trips):
    """Finish every thread in trips that a crash left unfinished; return those trips."""
    unfinished = []
    for trip in trips:
        snapshot = marta_agent(world, saver, trip_id=trip).get_state(config(trip))
        if snapshot.created_at is not None and snapshot.tasks:  # a step still to run
            unfinished.append(trip)
    for trip in unfinished:  # a fresh agent per thread: its tool books under that trip
        marta_agent(world, saver, trip_id=trip).invoke(None, config(trip), durability="sync")
    return unfinished
