def approve_with_heads_ups(state, world):
    """Each reader gets one heads-up, then their question: the desk, then maybe a manager."""
    thread = state["thread_id"]
    if state["cents"] >= APPROVAL_THRESHOLD_CENTS:  # the desk is told about anything big
        world.mail.send(**approval_notice(state), email_id=f"{thread}:heads-up:desk")
    update = ask_a_person(state, world)
    if update["approved"] and state["cents"] > MANAGER_THRESHOLD_CENTS:
        world.mail.send(**manager_notice(state), email_id=f"{thread}:heads-up:manager")
        decision = read_decision(interrupt(manager_request(state)), by="manager")
        update = {**update, "approved": decision["approved"], "decision": decision}
    return update
