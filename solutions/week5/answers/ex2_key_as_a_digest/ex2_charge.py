import hashlib


def charge_key(state):
    """The idempotency key of this conversation's charge of this invoice."""
    parts = "|".join([state["thread_id"], "charge", state["invoice_id"]])
    return "charge-" + hashlib.sha256(parts.encode()).hexdigest()[:32]


def charge(state, world):
    """Charge the invoice once, however many times this node runs."""
    answer = world.billing.charge(
        customer_id=state["customer_id"], invoice_id=state["invoice_id"],
        cents=state["cents"], currency=state["currency"], idempotency_key=charge_key(state))
    return {"charge": answer, "log": ["charge"]}
