def checkpoint_before(graph, config, node):
    """The config of the newest checkpoint on the current branch with `node` next (or None)."""
    snapshot = graph.get_state(config)
    while snapshot is not None:
        if snapshot.next == (node,):
            return snapshot.config
        snapshot = graph.get_state(snapshot.parent_config) if snapshot.parent_config else None
    return None
