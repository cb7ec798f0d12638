def durable_graph(nodes, world):
    """The support graph over these nodes, with a checkpointer."""
    return build_support_graph(nodes, world=world, checkpointer=InMemorySaver())


def handle(graph, thread_id, message):
    """One delivery of the thread's message: start it, carry it on, or run nothing."""
    config = config_of(thread_id)
    start = ask(thread_id, message) if graph.get_state(config).created_at is None else None
    try:
        return graph.invoke(start, config)
    except Exception:  # the checkpoint keeps what finished: hand back what is saved
        return graph.get_state(config).values
