def send_receipt_to(graph, config, address):
    """Fork the thread where the receipt is next, with another address; run it to the end."""
    before_refund = next(s.config for s in graph.get_state_history(config)
                         if s.metadata["step"] == 2)  # the time-travel demo's checkpoint
    forked = graph.update_state(before_refund, {"customer_email": address})
    return graph.invoke(None, forked)
