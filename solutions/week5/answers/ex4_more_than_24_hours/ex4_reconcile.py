def charge_or_reconcile(state, world):
    """The charge node for a run that may have died while its charge was in flight."""
    from datetime import datetime, timedelta

    waited = world.billing.now() - datetime.fromisoformat(state["checkpoint_at"])
    if waited > timedelta(hours=24):
        for row in world.billing.charges():
            if row["idempotency_key"] == charge_key(state):
                return {"charge": row, "settled_by": "records", "log": ["charge"]}
    answer = charge(state, world)["charge"]
    return {"charge": answer, "settled_by": "key" if answer["replayed"] else "charged",
            "log": ["charge"]}
