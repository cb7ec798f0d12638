def charge_or_reconcile(state, world):
    """The charge node for a run that may have died while its charge was in flight."""
    landed = world.billing.find_by_key(charge_key(state))
    if landed is not None:
        return {"charge": landed, "settled_by": "key", "log": ["charge"]}
    answer = charge(state, world)["charge"]
    return {"charge": answer, "settled_by": "key" if answer["replayed"] else "charged",
            "log": ["charge"]}
