
from course.cloudwave import receipt
from course.durable import guarded
from course.durable import idem_key as fingerprint


def build_my_graph(world, checkpointer):
    """My own nodes: the guard's session names the customer and the invoice; the
    receipt's email id is a hash of the invoice, not a readable key."""
    def charge(state, world):
        args = {"customer_id": state["customer_id"], "invoice_id": state["invoice_id"],
                "cents": state["cents"], "currency": state["currency"]}

        def capture(idem_key, **kwargs):
            return world.billing.charge(**kwargs, idempotency_key=idem_key)

        session = f"{state['customer_id']}/{state['invoice_id']}"  # one payment per invoice
        return {"charge": guarded(session, "pay", capture, args, store=world.records),
                "log": ["charge"]}

    def email(state, world):
        mail = receipt(state)
        email_id = fingerprint(state["invoice_id"], "email",
                               {"template": mail["template"], "invoice_id": state["invoice_id"]})
        return {"email": world.mail.send(**mail, email_id=email_id), "log": ["email"]}

    nodes = {"parse": parse, "retrieve": retrieve, "charge": charge, "email": email}
    return build_graph(nodes, world=world, checkpointer=checkpointer)
