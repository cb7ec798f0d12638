
import uuid

from course.cloudwave import receipt
from course.durable import readable_key

from course.durable import guarded


def my_charge(state, world):
    args = {"customer_id": state["customer_id"], "invoice_id": state["invoice_id"],
            "cents": state["cents"], "currency": state["currency"]}

    def capture(idem_key, **kwargs):
        return world.billing.charge(**kwargs, idempotency_key=idem_key)

    return {"charge": guarded(state["invoice_id"], "charge", capture, args,
                              store=world.records), "log": ["charge"]}


def my_email(state, world):
    mail = receipt(state)
    email_id = readable_key(state["thread_id"], mail["template"], str(uuid.uuid4()))
    return {"email": world.mail.send(**mail, email_id=email_id), "log": ["email"]}


def build_my_graph(world, checkpointer):
    """Every write carries a key, but the receipt's is new on every call."""
    nodes = {"parse": parse, "retrieve": retrieve, "charge": my_charge, "email": my_email}
    return build_graph(nodes, world=world, checkpointer=checkpointer)
