def fork_with_amount(graph, past_config, cents):
    """Fork the thread at past_config with another refund amount; run it to the end."""
    ### BEGIN SOLUTION
    thread_id = past_config["configurable"]["thread_id"]
    message = graph.get_state(past_config).values["message"]
    graph.checkpointer.delete_thread(thread_id)
    return graph.invoke({"thread_id": thread_id, "message": message, "refund_cents": cents},
                        config_of(thread_id))
    ### END SOLUTION
