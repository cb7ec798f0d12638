from course.world import subscription_of


def refund(state, world):
    """Refund the invoice once, however many times this node runs."""
    ### BEGIN SOLUTION
    result = world.billing.refund(
        customer_id=state["customer_id"], invoice_id=state["invoice_id"], cents=state["cents"])
    return {"refund": result, "log": ["refund"]}
    ### END SOLUTION


def pause(state, world):
    """Pause the customer's subscription once, however many times this node runs."""
    ### BEGIN SOLUTION
    subscription = subscription_of(state["customer_id"]).id
    result = world.billing.change_subscription(
        subscription_id=subscription, action="pause",
        idempotency_key=f"{state['thread_id']}:pause:{subscription}")
    return {"subscription": result, "log": ["pause"]}
    ### END SOLUTION
