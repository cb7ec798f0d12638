def checkpoint_before(graph, config, node):
    """The config of the newest checkpoint whose next node is `node` (or None)."""
    ### BEGIN SOLUTION
    return next(s.config for s in graph.get_state_history(config) if s.next == (node,))
    ### END SOLUTION
