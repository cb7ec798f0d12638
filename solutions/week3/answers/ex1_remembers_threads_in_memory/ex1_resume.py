def durable_graph(nodes, world):
    """The support graph over these nodes, with a checkpointer."""
    return build_support_graph(nodes, world=world, checkpointer=InMemorySaver())


_started = set()  # the threads this worker has started


def handle(graph, thread_id, message):
    """One delivery of the thread's message: start it, carry it on, or run nothing."""
    config = config_of(thread_id)
    if thread_id in _started:
        return graph.invoke(None, config)
    _started.add(thread_id)
    return graph.invoke(ask(thread_id, message), config)
