def resume_crashed(world, saver, trips):
    def unfinished(trip):
        return bool(marta_agent(world, saver, trip_id=trip).get_state(config(trip)).tasks)

    crashed = [trip for trip in trips if unfinished(trip)]
    for trip in crashed:
        thread = config(trip)
        marta_agent(world, saver, trip_id=trip).invoke(None, thread, durability="sync")
    return crashed
