def approve_with_heads_ups(state, world):
    """Each reader gets one heads-up, then their question: the desk, then maybe a manager."""
    if state["cents"] > APPROVAL_THRESHOLD_CENTS:
        world.mail.send(**approval_notice(state), email_id=f"{state['thread_id']}:desk")
    update = ask_a_person(state, world)
    if update["approved"] and state["cents"] > MANAGER_THRESHOLD_CENTS:
        world.mail.send(**manager_notice(state), email_id=f"{state['thread_id']}:manager")
        interrupt(manager_request(state))  # asked, but the answer is never read
    return update
