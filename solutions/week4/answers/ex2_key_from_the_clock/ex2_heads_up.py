def approve_with_heads_up(state, world):
    """Tell the approvals desk once, then wait for the person."""
    ### BEGIN SOLUTION
    if state["cents"] > APPROVAL_THRESHOLD_CENTS:
        world.mail.send(**approval_notice(state),
                        email_id=f"{state['thread_id']}:{__import__('time').time_ns()}")
    return ask_a_person(state, world)
    ### END SOLUTION
