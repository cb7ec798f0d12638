def try_in_sandbox(saver, thread_id, values, sandbox):
    graph = keyed_graph(sandbox, saver)
    fork = graph.update_state(config_of(thread_id), values)
    return graph.invoke(None, fork, durability="sync")
