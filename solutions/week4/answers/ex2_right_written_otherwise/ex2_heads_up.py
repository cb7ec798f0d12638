def approve_with_heads_ups(state, world):
    """Both questions asked here, each after its reader's heads-up, keyed by the reader."""
    if state["cents"] <= APPROVAL_THRESHOLD_CENTS:
        return ask_a_person(state, world)  # approved by the policy, nobody asked
    readers = [(approval_notice(state), approval_request(state), "desk")]
    if state["cents"] > MANAGER_THRESHOLD_CENTS:
        readers.append((manager_notice(state), manager_request(state), "manager"))
    for notice, request, reader in readers:
        world.mail.send(**notice, email_id=f"{state['thread_id']}/{notice['to']}")
        decision = read_decision(interrupt(request), by=reader)
        if not decision["approved"]:
            break
    return {"needs_approval": True, "approved": decision["approved"], "decision": decision,
            "log": ["approve"]}
