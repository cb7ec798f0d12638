def send_receipt_to(graph, config, address):
    """Fork the thread where the receipt is next, with another address; run it to the end."""
    ### BEGIN SOLUTION
    before_email = next(s.config for s in graph.get_state_history(config)
                        if s.next == ("email",))
    return graph.invoke({"customer_email": address}, before_email)
    ### END SOLUTION
