def charge_or_reconcile(state, world):
    """The charge node for a run that may have died while its charge was in flight."""
    ### BEGIN SOLUTION
    from course.world import KeyInUse

    try:
        answer = charge(state, world)["charge"]
    except KeyInUse:
        return {"charge": None, "reconciled": False, "log": ["charge"]}
    return {"charge": answer, "reconciled": answer["replayed"], "log": ["charge"]}
    ### END SOLUTION
