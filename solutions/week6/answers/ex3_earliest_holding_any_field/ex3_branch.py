def try_in_sandbox(saver, thread_id, values, sandbox):
    """Fork from the earliest checkpoint holding every field of ``values``, run it in ``sandbox``."""
    graph = keyed_graph(sandbox, saver)
    oldest_first = reversed(list(graph.get_state_history(config_of(thread_id))))
    past = next(snap.config for snap in oldest_first
                if any(field in snap.values for field in values))
    fork = branch(graph, past, values)
    return graph.invoke(None, fork, durability="sync")
