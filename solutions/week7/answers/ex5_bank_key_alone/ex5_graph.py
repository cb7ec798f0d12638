from course.cloudwave import receipt
from course.durable import readable_key


def build_my_graph(world, checkpointer):
    """Keys named after the invoice, and nothing else: no record of my own."""
    def charge(state, world):
        charged = world.billing.charge(
            customer_id=state["customer_id"], invoice_id=state["invoice_id"],
            cents=state["cents"], currency=state["currency"],
            idempotency_key=readable_key(state["invoice_id"], "charge"))
        return {"charge": charged, "log": ["charge"]}

    def email(state, world):
        mail = receipt(state)
        key = readable_key(state["invoice_id"], mail["template"])
        return {"email": world.mail.send(**mail, email_id=key), "log": ["email"]}

    nodes = {"parse": parse, "retrieve": retrieve, "charge": charge, "email": email}
    return build_graph(nodes, world=world, checkpointer=checkpointer)
