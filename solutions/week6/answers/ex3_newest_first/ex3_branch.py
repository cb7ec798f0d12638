def try_in_sandbox(saver, thread_id, values, sandbox):
    graph = keyed_graph(sandbox, saver)
    for snap in graph.get_state_history(config_of(thread_id)):  # newest first: the head
        if all(field in snap.values for field in values):
            fork = branch(graph, snap.config, values)
            return graph.invoke(None, fork, durability="sync")
    raise ValueError("no checkpoint holds those fields")
