def route(state):
    """The branch for this conversation: refund, pause, cancel, or answer."""
    if state["intent"] in ("refund", "pause", "cancel"):
        return state["intent"]
    return "answer"
