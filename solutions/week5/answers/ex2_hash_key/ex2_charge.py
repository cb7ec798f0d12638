def charge_key(state):
    """The idempotency key of this conversation's charge of this invoice."""
    ### BEGIN SOLUTION
    payload = (state["customer_id"], state["invoice_id"], state["cents"], state["currency"])
    return f"{state['thread_id']}:charge:{hash(payload)}"
    ### END SOLUTION


def charge(state, world):
    """Charge the invoice once, however many times this node runs."""
    ### BEGIN SOLUTION
    result = world.billing.charge(customer_id=state["customer_id"],
                                  invoice_id=state["invoice_id"], cents=state["cents"],
                                  currency=state["currency"], idempotency_key=charge_key(state))
    return {"charge": result, "log": ["charge"]}
    ### END SOLUTION
