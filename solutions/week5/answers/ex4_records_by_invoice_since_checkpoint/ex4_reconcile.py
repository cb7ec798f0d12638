def charge_or_reconcile(state, world):
    """The charge node for a run that may have died while its charge was in flight."""
    from datetime import datetime, timedelta

    since = datetime.fromisoformat(state["checkpoint_at"])
    if world.billing.now() - since >= timedelta(hours=24):  # the key may be pruned by now
        for row in world.billing.charges():
            if (row["invoice_id"], row["cents"]) == (state["invoice_id"], state["cents"]) \
                    and datetime.fromisoformat(row["created_at"]) >= since:
                return {"charge": row, "settled_by": "records", "log": ["charge"]}
    update = charge(state, world)  # the first attempt's key and parameters
    return {**update, "settled_by": "key" if update["charge"]["replayed"] else "charged"}
