def approve_with_heads_ups(state, world):
    """Fix 3 of the lesson, copied: the desk's heads-up keyed, then ask_a_person."""
    if state["cents"] > APPROVAL_THRESHOLD_CENTS:
        mail = approval_notice(state)
        world.mail.send(**mail, email_id=f"{state['thread_id']}:{mail['template']}")
    return ask_a_person(state, world)
