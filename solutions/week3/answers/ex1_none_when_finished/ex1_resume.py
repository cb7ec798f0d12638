def durable_graph(nodes, world):
    """The support graph over these nodes, with a checkpointer."""
    return build_support_graph(nodes, world=world, checkpointer=InMemorySaver())


def handle(graph, thread_id, message):
    """One delivery of the thread's message: start it, carry it on, or run nothing."""
    config = config_of(thread_id)
    snapshot = graph.get_state(config)
    if snapshot.created_at is None:
        return graph.invoke(ask(thread_id, message), config)
    if not snapshot.next:
        return None  # finished: nothing to resume
    return graph.invoke(None, config)
