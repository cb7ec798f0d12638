def approve_with_heads_up(state, world):
    """Tell the approvals desk once, then wait for the person."""
    world.mail.send(**approval_notice(state), email_id=f"{state['thread_id']}:approval_needed")
    return ask_a_person(state, world)
