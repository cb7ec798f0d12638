
def resume_marta(world, saver):
    agent = marta_agent(world, saver)
    retry = {"messages": [{"role": "user", "content": ASK}]}
    return agent.invoke(retry, config("marta-1042-retry"), durability="sync")["messages"]
