def checkpoint_before(graph, config, node):
    """The config of the newest checkpoint on the current branch with `node` next (or None)."""
    snapshot = graph.get_state(config)
    while True:
        if snapshot.values.get("log", [])[-1:] == [node]:
            return snapshot.config
        if snapshot.parent_config is None:
            return None
        snapshot = graph.get_state(snapshot.parent_config)
