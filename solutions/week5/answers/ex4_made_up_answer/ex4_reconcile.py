def charge_or_reconcile(state, world):
    """The charge node for a run that may have died while its charge was in flight."""
    ### BEGIN SOLUTION
    from course.world import KeyInUse

    try:
        answer = charge(state, world)["charge"]
    except KeyInUse:
        answer = {"id": "pending", "status": "captured", "replayed": True}
    return {"charge": answer, "reconciled": answer["replayed"], "log": ["charge"]}
    ### END SOLUTION
