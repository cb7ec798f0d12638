
from course.durable import guarded


def my_charge(state, world):
    args = {"customer_id": state["customer_id"], "invoice_id": state["invoice_id"],
            "cents": state["cents"], "currency": state["currency"]}

    def capture(idem_key, **kwargs):
        return world.billing.charge(**kwargs, idempotency_key=idem_key)

    return {"charge": guarded(state["invoice_id"], "charge", capture, args,
                              store=world.records), "log": ["charge"]}


def build_my_graph(world, checkpointer):
    """The charge was fixed; the receipt still goes out with no email id."""
    nodes = {"parse": parse, "retrieve": retrieve, "charge": my_charge, "email": email_naive}
    return build_graph(nodes, world=world, checkpointer=checkpointer)
