def send_receipt_to(graph, config, address):
    """Fork the thread where the receipt is next, with another address; run it to the end."""
    for snapshot in graph.get_state_history(config):
        if "email" in snapshot.next:
            graph.update_state(snapshot.config, {"customer_email": address}, as_node="refund")
            break
    graph.invoke(None, config_of(config["configurable"]["thread_id"]))
    return graph.get_state(config).values
