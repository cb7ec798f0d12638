def resume_crashed(world, saver, trips):
    agent = marta_agent(world, saver)
    agent.invoke(None, config(TRIP), durability="sync")
    return [TRIP]
