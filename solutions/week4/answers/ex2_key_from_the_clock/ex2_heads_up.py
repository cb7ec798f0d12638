import time


def approve_with_heads_ups(state, world):
    """Each reader gets one heads-up, then their question: the desk, then maybe a manager."""
    if state["cents"] > APPROVAL_THRESHOLD_CENTS:
        world.mail.send(**approval_notice(state), email_id=f"desk:{time.time_ns()}")
    update = ask_a_person(state, world)
    if not update["approved"] or state["cents"] <= MANAGER_THRESHOLD_CENTS:
        return update
    world.mail.send(**manager_notice(state), email_id=f"manager:{time.time_ns()}")
    decision = read_decision(interrupt(manager_request(state)), by="manager")
    return {**update, "approved": decision["approved"], "decision": decision}
