def send_receipt_to(graph, config, address):
    """Fork the thread where the receipt is next, with another address; run it to the end."""
    ### BEGIN SOLUTION
    forked = graph.update_state(config, {"customer_email": address})
    return graph.invoke(None, forked)
    ### END SOLUTION
