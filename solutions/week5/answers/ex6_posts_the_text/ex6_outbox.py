def record_and_enqueue(conn, state):
    """Record the cancellation and queue the partner's message in ONE transaction."""
    ### BEGIN SOLUTION
    subscription = subscription_of(state["customer_id"]).id
    message_id = f"{state['thread_id']}:subscription.cancelled:{subscription}"
    payload = {"message_id": message_id, "subscription_id": subscription,
               "customer_id": state["customer_id"], "invoice_id": state["invoice_id"]}
    with transaction(conn):
        conn.execute("INSERT OR IGNORE INTO cancellations VALUES (?, ?)",
                     (state["thread_id"], subscription))
        conn.execute("INSERT OR IGNORE INTO outbox (id, event, payload) VALUES (?, ?, ?)",
                     (message_id, "subscription.cancelled", json.dumps(payload, sort_keys=True)))
    return message_id
    ### END SOLUTION


def relay(conn, webhook):
    """Post every pending message, then mark it sent. Returns how many were posted."""
    ### BEGIN SOLUTION
    pending = conn.execute(
        "SELECT id, event, payload FROM outbox WHERE status = 'pending' ORDER BY seq").fetchall()
    for row in pending:
        webhook.post(row["event"], row["payload"], idempotency_key=row["id"])  # the stored text
        with transaction(conn):
            conn.execute("UPDATE outbox SET status = 'sent' WHERE id = ?", (row["id"],))
    return len(pending)
    ### END SOLUTION


def reconcile_outbox(conn, webhook):
    """Mark sent every pending message the partner already received. Returns how many."""
    ### BEGIN SOLUTION
    received = {d["payload"].get("message_id") for d in webhook.deliveries()}
    settled = 0
    with transaction(conn):
        rows = conn.execute("SELECT id FROM outbox WHERE status = 'pending'").fetchall()
        for row in rows:
            if row["id"] in received:
                conn.execute("UPDATE outbox SET status = 'sent' WHERE id = ?", (row["id"],))
                settled += 1
    return settled
    ### END SOLUTION
