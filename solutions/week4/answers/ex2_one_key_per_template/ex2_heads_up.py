def approve_with_heads_ups(state, world):
    """Each reader gets one heads-up, then their question: the desk, then maybe a manager."""
    if state["cents"] > APPROVAL_THRESHOLD_CENTS:
        mail = approval_notice(state)
        world.mail.send(**mail, email_id=f"{state['thread_id']}:{mail['template']}")
    update = ask_a_person(state, world)
    if not update["approved"] or state["cents"] <= MANAGER_THRESHOLD_CENTS:
        return update
    mail = manager_notice(state)
    world.mail.send(**mail, email_id=f"{state['thread_id']}:{mail['template']}")
    decision = read_decision(interrupt(manager_request(state)), by="manager")
    return {**update, "approved": decision["approved"], "decision": decision}
