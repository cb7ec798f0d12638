def approve_with_heads_ups(state, world):
    """Fix 1 of the lesson: each heads-up once its question has been answered."""
    update = ask_a_person(state, world)
    if state["cents"] > APPROVAL_THRESHOLD_CENTS:
        world.mail.send(**approval_notice(state))
    if not update["approved"] or state["cents"] <= MANAGER_THRESHOLD_CENTS:
        return update
    decision = read_decision(interrupt(manager_request(state)), by="manager")
    world.mail.send(**manager_notice(state))
    return {**update, "approved": decision["approved"], "decision": decision}
