_told = set()  # (world, conversation, reader) triples that got their heads-up


def approve_with_heads_ups(state, world):
    """Each reader gets one heads-up, then their question: the desk, then maybe a manager."""
    def tell(reader, mail):
        if (id(world), state["thread_id"], reader) not in _told:
            _told.add((id(world), state["thread_id"], reader))
            world.mail.send(**mail)

    if state["cents"] > APPROVAL_THRESHOLD_CENTS:
        tell("desk", approval_notice(state))
    update = ask_a_person(state, world)
    if not update["approved"] or state["cents"] <= MANAGER_THRESHOLD_CENTS:
        return update
    tell("manager", manager_notice(state))
    decision = read_decision(interrupt(manager_request(state)), by="manager")
    return {**update, "approved": decision["approved"], "decision": decision}
