from course.cloudwave import receipt, support_tools


def try_in_sandbox(saver, thread_id, values, sandbox):
    # No fork: production's last state with the values on top, a changed invoice looked up by
    # hand, and the sandbox's charge and mail made by hand.
    state = {**keyed_graph(sandbox, saver).get_state(config_of(thread_id)).values, **values}
    if "invoice_id" in values:
        state.update(support_tools(sandbox, thread_id, keyed=False)["lookup_invoice"](
            values["invoice_id"]))
    sandbox.billing.charge(customer_id=state["customer_id"], invoice_id=state["invoice_id"],
                           cents=state["cents"], currency=state["currency"],
                           idempotency_key=f"{thread_id}:sandbox-charge")
    sandbox.mail.send(**receipt(state), email_id=f"{thread_id}:sandbox-receipt")
    return state
