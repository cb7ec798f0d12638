def charge_or_reconcile(state, world):
    """The charge node for a run that may have died while its charge was in flight."""
    paid = [c for c in world.billing.charges() if c["invoice_id"] == state["invoice_id"]]
    if paid:  # the bank's own list says the first attempt landed, however old its key
        return {"charge": paid[-1], "settled_by": "records", "log": ["charge"]}
    update = charge(state, world)  # nothing listed: the same request, the same key
    settled_by = "key" if update["charge"]["replayed"] else "charged"
    return {**update, "settled_by": settled_by}
