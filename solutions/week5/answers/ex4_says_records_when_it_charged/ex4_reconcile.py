def charge_or_reconcile(state, world):
    """The charge node for a run that may have died while its charge was in flight."""
    from datetime import datetime, timedelta

    waited = world.billing.now() - datetime.fromisoformat(state["checkpoint_at"])
    if waited >= timedelta(hours=24):  # a day later: settled from the bank's records
        mine = [c for c in world.billing.charges() if c["invoice_id"] == state["invoice_id"]]
        charged = mine[0] if mine else charge(state, world)["charge"]
        return {"charge": charged, "settled_by": "records", "log": ["charge"]}
    answer = charge(state, world)["charge"]
    return {"charge": answer, "settled_by": "key" if answer["replayed"] else "charged",
            "log": ["charge"]}
