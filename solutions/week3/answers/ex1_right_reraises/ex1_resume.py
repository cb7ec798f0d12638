def durable_graph(nodes, world):
    """The support graph over these nodes, with a checkpointer."""
    return build_support_graph(nodes, world=world, checkpointer=InMemorySaver())


FAILED_DELIVERIES = []  # (thread, error) of every delivery that failed, for the dashboard


def handle(graph, thread_id, message):
    """One delivery of the thread's message: start it, carry it on, or run nothing."""
    config = config_of(thread_id)
    saved = graph.get_state(config)
    try:
        if saved.created_at is None:
            return graph.invoke(ask(thread_id, message), config)
        if not saved.next:  # finished: nothing to run
            return saved.values
        return graph.invoke(None, config)
    except Exception as error:
        FAILED_DELIVERIES.append((thread_id, repr(error)))
        raise  # the queue delivers the message again
