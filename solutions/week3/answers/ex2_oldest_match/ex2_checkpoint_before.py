def checkpoint_before(graph, config, node):
    """The config of the newest checkpoint on the current branch with `node` next (or None)."""
    found = None
    snapshot = graph.get_state(config)
    while True:
        if node in snapshot.next:
            found = snapshot.config  # keeps going: the last one met is the oldest
        if snapshot.parent_config is None:
            return found
        snapshot = graph.get_state(snapshot.parent_config)
