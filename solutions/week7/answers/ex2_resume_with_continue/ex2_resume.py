def resume_crashed(world, saver, trips):
    resumed = []
    for trip in trips:
        agent = marta_agent(world, saver, trip_id=trip)
        if agent.get_state(config(trip)).next:
            again = {"messages": [{"role": "user", "content": "Continue Marta's booking."}]}
            agent.invoke(again, config(trip), durability="sync")
            resumed.append(trip)
    return resumed
