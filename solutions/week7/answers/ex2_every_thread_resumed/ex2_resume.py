def resume_crashed(world, saver, trips):
    for trip in trips:
        marta_agent(world, saver, trip_id=trip).invoke(None, config(trip), durability="sync")
    return list(trips)
