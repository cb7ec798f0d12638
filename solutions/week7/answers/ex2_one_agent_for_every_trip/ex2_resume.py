def resume_crashed(world, saver, trips):
    agent = marta_agent(world, saver)
    resumed = []
    for trip in trips:
        if agent.get_state(config(trip)).next:
            agent.invoke(None, config(trip), durability="sync")
            resumed.append(trip)
    return resumed
