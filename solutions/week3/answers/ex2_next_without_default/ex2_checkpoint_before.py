def checkpoint_before(graph, config, node):
    """The config of the newest checkpoint on the current branch with `node` next (or None)."""
    snapshot = graph.get_state(config)
    while node not in snapshot.next:
        snapshot = graph.get_state(snapshot.parent_config)
    return snapshot.config
