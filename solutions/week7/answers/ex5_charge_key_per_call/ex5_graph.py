
import uuid

from course.cloudwave import receipt


def build_my_graph(world, checkpointer):
    """Keys everywhere, but the charge's key is new on every call."""
    def charge(state, world):
        result = world.billing.charge(
            customer_id=state["customer_id"], invoice_id=state["invoice_id"],
            cents=state["cents"], currency=state["currency"],
            idempotency_key=f"{state['thread_id']}:charge:{uuid.uuid4()}")
        return {"charge": result, "log": ["charge"]}

    def email(state, world):
        mail = receipt(state)
        sent = world.mail.send(**mail, email_id=f"{state['thread_id']}:{mail['template']}")
        return {"email": sent, "log": ["email"]}

    nodes = {"parse": parse, "retrieve": retrieve, "charge": charge, "email": email}
    return build_graph(nodes, world=world, checkpointer=checkpointer)
