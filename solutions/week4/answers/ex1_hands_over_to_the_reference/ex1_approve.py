def approve(state, world):
    """Refunds over the threshold wait for a person; the decision goes into the state."""
    return ask_a_person(state, world)
