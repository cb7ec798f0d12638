def approve_with_heads_up(state, world):
    """Tell the approvals desk once, then wait for the person."""
    update = ask_a_person(state, world)  # the mail goes out once the answer is in
    if state["cents"] > APPROVAL_THRESHOLD_CENTS:
        world.mail.send(**approval_notice(state))
    return update
