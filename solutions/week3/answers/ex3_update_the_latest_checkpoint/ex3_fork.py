def fork_with_amount(graph, past_config, cents):
    """Fork the thread at past_config with another refund amount; run it to the end."""
    ### BEGIN SOLUTION
    latest = config_of(past_config["configurable"]["thread_id"])
    forked = graph.update_state(latest, {"refund_cents": cents})
    return graph.invoke(None, forked)
    ### END SOLUTION
