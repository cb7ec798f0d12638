_told = set()  # the conversations the desk has heard about


def approve_with_heads_up(state, world):
    """Tell the approvals desk once, then wait for the person."""
    seen = (id(world), state["thread_id"])
    if state["cents"] > APPROVAL_THRESHOLD_CENTS and seen not in _told:
        _told.add(seen)
        world.mail.send(**approval_notice(state))
    return ask_a_person(state, world)
