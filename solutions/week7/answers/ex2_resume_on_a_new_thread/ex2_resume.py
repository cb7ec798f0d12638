def resume_crashed(world, saver, trips):
    resumed = []
    for trip in trips:
        agent = marta_agent(world, saver, trip_id=trip)
        if agent.get_state(config(trip)).next:
            retry = {"messages": [{"role": "user", "content": ASK}]}
            agent.invoke(retry, config(f"{trip}-retry"), durability="sync")
            resumed.append(trip)
    return resumed
