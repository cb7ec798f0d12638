def fork_with_amount(graph, past_config, cents):
    """Fork the thread at past_config with another refund amount; run it to the end."""
    ### BEGIN SOLUTION
    return graph.invoke(None, past_config)
    ### END SOLUTION
