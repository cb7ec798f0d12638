def durable_graph(nodes, world):
    """The support graph over these nodes, with a checkpointer."""
    ### BEGIN SOLUTION
    return build_support_graph(nodes, world=world, checkpointer=InMemorySaver())
    ### END SOLUTION


def resume(graph, thread_id):
    """Carry on the thread from its last checkpoint; return the final state."""
    ### BEGIN SOLUTION
    config = config_of(thread_id)
    return graph.invoke(graph.get_state(config).values, config)
    ### END SOLUTION
