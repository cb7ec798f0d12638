def send_receipt_to(graph, config, address):
    """Fork the thread where the receipt is next, with another address; run it to the end."""
    ### BEGIN SOLUTION
    thread_id = config["configurable"]["thread_id"]
    message = graph.get_state(config).values["message"]
    graph.checkpointer.delete_thread(thread_id)
    return graph.invoke({"thread_id": thread_id, "message": message,
                         "customer_email": address}, config_of(thread_id))
    ### END SOLUTION
