def approve_with_heads_ups(state, world):
    """Each reader gets one heads-up, then their question: the desk, then maybe a manager."""
    thread = state["thread_id"]
    if state["cents"] > APPROVAL_THRESHOLD_CENTS:
        world.mail.send(**approval_notice(state), email_id=f"{thread}:heads-up:desk")
    update = ask_a_person(state, world)
    if not update["approved"] or state["cents"] <= MANAGER_THRESHOLD_CENTS:
        return update
    world.mail.send(**manager_notice(state), email_id=f"{thread}:heads-up:manager")
    answer = interrupt(manager_request(state))
    try:
        decision = read_decision(answer, by="manager")
    except ValueError as unclear:  # as in exercise 1: anything but an explicit yes is a no
        decision = {"approved": False, "reason": str(unclear), "by": "manager"}
    return {**update, "approved": decision["approved"], "decision": decision}
