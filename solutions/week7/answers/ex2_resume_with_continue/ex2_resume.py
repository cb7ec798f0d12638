
def resume_marta(world, saver):
    agent = marta_agent(world, saver)
    new_input = {"messages": [{"role": "user", "content": "Continue Marta's booking."}]}
    return agent.invoke(new_input, config(TRIP), durability="sync")["messages"]
