def try_in_sandbox(saver, thread_id, values, sandbox):
    """Fork from the earliest checkpoint holding every field of ``values``, run it in ``sandbox``."""
    graph = keyed_graph(sandbox, saver)
    field = next(iter(values))  # the field the engineer changes
    snapshots = list(graph.get_state_history(config_of(thread_id)))
    holding = [snap for snap in snapshots if field in snap.values]
    fork = branch(graph, holding[-1].config, values)  # newest first: the last is the earliest
    return graph.invoke(None, fork, durability="sync")
