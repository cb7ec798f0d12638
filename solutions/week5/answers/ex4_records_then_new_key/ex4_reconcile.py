def charge_or_reconcile(state, world):
    """The charge node for a run that may have died while its charge was in flight."""
    mine = [c for c in world.billing.charges() if c["invoice_id"] == state["invoice_id"]]
    if mine:
        return {"charge": mine[0], "settled_by": "records", "log": ["charge"]}
    answer = world.billing.charge(  # nothing listed: a fresh charge, under a fresh key
        customer_id=state["customer_id"], invoice_id=state["invoice_id"],
        cents=state["cents"], currency=state["currency"],
        idempotency_key=charge_key(state) + ":checked")
    return {"charge": answer, "settled_by": "charged", "log": ["charge"]}
