def checkpoint_before(graph, config, node):
    """The config of the newest checkpoint whose next node is `node` (or None)."""
    ### BEGIN SOLUTION
    for snapshot in graph.get_state_history(config):
        if node in snapshot.next:
            return snapshot
    return None
    ### END SOLUTION
