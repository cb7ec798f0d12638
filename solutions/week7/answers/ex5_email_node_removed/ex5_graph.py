
from course.durable import guarded


def my_charge(state, world):
    args = {"customer_id": state["customer_id"], "invoice_id": state["invoice_id"],
            "cents": state["cents"], "currency": state["currency"]}

    def capture(idem_key, **kwargs):
        return world.billing.charge(**kwargs, idempotency_key=idem_key)

    return {"charge": guarded(state["invoice_id"], "charge", capture, args,
                              store=world.records), "log": ["charge"]}


def build_my_graph(world, checkpointer):
    """The audit flagged the email, so the email went."""
    nodes = {"parse": parse, "retrieve": retrieve, "charge": my_charge}
    return build_graph(nodes, world=world, checkpointer=checkpointer)
