def try_in_sandbox(saver, thread_id, values, sandbox):
    graph = keyed_graph(sandbox, saver)
    earliest = None
    for checkpoint_id, _next, state in history(graph, config_of(thread_id)):  # newest first
        if set(values) <= set(state):
            earliest = checkpoint_id  # keep going: an older one may hold them too
    config = {"configurable": {"thread_id": thread_id, "checkpoint_ns": "",
                               "checkpoint_id": earliest}}
    fork = graph.update_state(config, values)
    graph.invoke(None, fork, durability="sync")
    return graph.get_state(config_of(thread_id)).values
