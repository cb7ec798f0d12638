def send_receipt_to(graph, config, address):
    """Fork the thread where the receipt is next, with another address; run it to the end."""
    refunded_not_mailed = [s for s in graph.get_state_history(config)
                           if "refund" in s.values and "email" not in s.values]
    forked = graph.update_state(refunded_not_mailed[0].config, {"customer_email": address})
    return graph.invoke(None, forked)
