def approve_with_heads_ups(state, world):
    """Each reader gets one heads-up, then their question: the desk, then maybe a manager."""
    over_desk = state["cents"] > APPROVAL_THRESHOLD_CENTS
    if over_desk:
        world.mail.send(**approval_notice(state),
                        email_id=f"heads-up|{state['thread_id']}|{approval_notice(state)['to']}")
    update = ask_a_person(state, world)
    if not (update["approved"] and state["cents"] > MANAGER_THRESHOLD_CENTS):
        return update
    world.mail.send(**manager_notice(state), email_id=f"heads-up|{state['thread_id']}|{MANAGER}")
    answer = interrupt(manager_request(state))
    if not isinstance(answer, dict) or not isinstance(answer.get("approved"), bool):
        raise ValueError(f"the manager's answer is not {{'approved': True or False}}: {answer!r}")
    decision = read_decision(answer, by="manager")
    return {**update, "approved": decision["approved"], "decision": decision}
