def try_in_sandbox(saver, thread_id, values, sandbox):
    graph = keyed_graph(sandbox, saver)
    oldest_first = reversed(list(graph.get_state_history(config_of(thread_id))))
    past = next(snap.config for snap in oldest_first
                if all(field in snap.values for field in values))
    fork = branch(graph, past, values)
    graph.invoke(None, fork, durability="sync")
    return graph.get_state(fork).values  # the fork checkpoint itself: from before the run
