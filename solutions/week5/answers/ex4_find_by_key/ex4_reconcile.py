def charge_or_reconcile(state, world):
    """The charge node for a run that may have died while its charge was in flight."""
    ### BEGIN SOLUTION
    landed = world.billing.find_by_key(charge_key(state))
    if landed is not None:
        return {"charge": landed, "reconciled": True, "log": ["charge"]}
    return {**charge(state, world), "reconciled": False}
    ### END SOLUTION
