def durable_graph(nodes, world):
    """The support graph over these nodes, with a checkpointer."""
    return build_support_graph(nodes, world=world, checkpointer=InMemorySaver())


def handle(graph, thread_id, message):
    """One delivery of the thread's message: start it, carry it on, or run nothing."""
    config = config_of(thread_id)
    if graph.get_state(config).created_at is None:
        return graph.invoke(ask(thread_id, message), config)  # a failure here goes back
    try:  # a message delivered again: carry the run on, and confirm it whatever happens
        return graph.invoke(None, config)
    except Exception:
        return graph.get_state(config).values
