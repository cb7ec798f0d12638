from course.cloudwave.approval import ask_a_person as decide


def approve(state, world):
    """Refunds over the threshold wait for a person; the decision goes into the state."""
    return decide(state, world)
