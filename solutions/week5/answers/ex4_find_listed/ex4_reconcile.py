from datetime import datetime

KEY_KEPT_S = 24 * 60 * 60  # a provider keeps a key at least this long (the simulator: exactly)


def charge_or_reconcile(state, world):
    """The charge node for a run that may have died while its charge was in flight."""
    age = (world.billing.now() - datetime.fromisoformat(state["checkpoint_at"])).total_seconds()
    if age < KEY_KEPT_S:
        update = charge(state, world)
        return {**update, "settled_by": "key" if update["charge"]["replayed"] else "charged"}
    mine = world.find_listed(charge_key(state))  # the bank's charges, listed
    if mine is not None:
        return {"charge": mine, "settled_by": "records", "log": ["charge"]}
    return {**charge(state, world), "settled_by": "charged"}
