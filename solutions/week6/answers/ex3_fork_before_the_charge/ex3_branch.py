def try_in_sandbox(saver, thread_id, values, sandbox):
    graph = keyed_graph(sandbox, saver)
    past = checkpoint_before(graph, config_of(thread_id), "charge")  # the money node, always
    return graph.invoke(None, branch(graph, past, values), durability="sync")
