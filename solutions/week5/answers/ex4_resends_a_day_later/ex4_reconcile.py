def charge_or_reconcile(state, world):
    """The charge node for a run that may have died while its charge was in flight."""
    answer = charge(state, world)["charge"]  # the same key and parameters as the first try
    return {"charge": answer, "settled_by": "key" if answer["replayed"] else "charged",
            "log": ["charge"]}
