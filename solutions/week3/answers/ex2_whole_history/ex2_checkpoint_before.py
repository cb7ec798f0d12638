def checkpoint_before(graph, config, node):
    """The config of the newest checkpoint on the current branch with `node` next (or None)."""
    for snapshot in graph.get_state_history(config):
        if node in snapshot.next:
            return snapshot.config
    return None
