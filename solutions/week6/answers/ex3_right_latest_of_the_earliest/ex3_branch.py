def try_in_sandbox(saver, thread_id, values, sandbox):
    """Fork from the earliest checkpoint holding every field of ``values``, run it in ``sandbox``."""
    graph = keyed_graph(sandbox, saver)
    history_ = list(graph.get_state_history(config_of(thread_id)))  # newest first
    by_step = {snap.metadata["step"]: snap for snap in history_}
    first_held = [min(step for step, snap in by_step.items() if field in snap.values)
                  for field in values]  # where each field first appears
    past = by_step[max(first_held)].config  # the latest of those: all are held from there on
    fork = branch(graph, past, values)
    return graph.invoke(None, fork, durability="sync")
