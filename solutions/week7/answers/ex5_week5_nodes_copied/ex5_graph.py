from course.cloudwave import receipt
from course.durable import guarded, readable_key


def build_my_graph(world, checkpointer):
    """Week 5's keyed nodes typed out again: the guard's session and the email id are the
    thread's."""
    def charge(state, world):
        args = {"customer_id": state["customer_id"], "invoice_id": state["invoice_id"],
                "cents": state["cents"], "currency": state["currency"]}

        def capture(idem_key, **kwargs):
            return world.billing.charge(**kwargs, idempotency_key=idem_key)

        result = guarded(state["thread_id"], "charge", capture, args, store=world.records)
        return {"charge": result, "log": ["charge"]}

    def email(state, world):
        mail = receipt(state)
        key = readable_key(state["thread_id"], mail["template"], state["customer_id"])
        return {"email": world.mail.send(**mail, email_id=key), "log": ["email"]}

    nodes = {"parse": parse, "retrieve": retrieve, "charge": charge, "email": email}
    return build_graph(nodes, world=world, checkpointer=checkpointer)
