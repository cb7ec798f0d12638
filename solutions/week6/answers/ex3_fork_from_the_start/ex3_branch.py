def try_in_sandbox(saver, thread_id, values, sandbox):
    graph = keyed_graph(sandbox, saver)
    start = checkpoint_before(graph, config_of(thread_id), "parse")  # the whole run, again
    fork = branch(graph, start, values)
    return graph.invoke(None, fork, durability="sync")
