def checkpoint_before(graph, config, node):
    """The config of the newest checkpoint on the current branch with `node` next (or None)."""
    by_id = {s.config["configurable"]["checkpoint_id"]: s
             for s in graph.get_state_history(config)}
    current = graph.get_state(config).config["configurable"].get("checkpoint_id")
    while current in by_id:
        snapshot = by_id[current]
        if node in snapshot.next:
            return snapshot.config
        current = (snapshot.parent_config or {}).get("configurable", {}).get("checkpoint_id")
    return None
