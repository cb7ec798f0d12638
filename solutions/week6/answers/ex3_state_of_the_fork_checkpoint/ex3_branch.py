def try_in_sandbox(saver, thread_id, values, sandbox):
    graph = keyed_graph(sandbox, saver)
    fork = branch(graph, checkpoint_before(graph, config_of(thread_id), "charge"), values)
    graph.invoke(None, fork, durability="sync")
    return graph.get_state(fork).values  # the fork checkpoint itself: charge has not run there
