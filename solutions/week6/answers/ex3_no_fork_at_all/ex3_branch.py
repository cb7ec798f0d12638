from course.cloudwave import receipt


def try_in_sandbox(saver, thread_id, values, sandbox):
    # No fork: read production's last state, and make the sandbox's charge and mail by hand.
    state = {**keyed_graph(sandbox, saver).get_state(config_of(thread_id)).values, **values}
    sandbox.billing.charge(customer_id=state["customer_id"], invoice_id=state["invoice_id"],
                           cents=state["cents"], currency=state["currency"],
                           idempotency_key=f"{thread_id}:sandbox-charge")
    sandbox.mail.send(**receipt(state), email_id=f"{thread_id}:sandbox-receipt")
    return state
