def checkpoint_before(graph, config, node):
    """The config of the newest checkpoint on the current branch with `node` next (or None)."""
    snapshot = graph.get_state(config)
    while True:
        if node in snapshot.next:
            return snapshot
        if snapshot.parent_config is None:
            return None
        snapshot = graph.get_state(snapshot.parent_config)
