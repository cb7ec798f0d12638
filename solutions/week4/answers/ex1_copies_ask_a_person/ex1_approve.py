def approve(state, world):
    """Refunds over the threshold wait for a person; only an explicit yes refunds."""
    if state["cents"] <= APPROVAL_THRESHOLD_CENTS:
        decision = {"approved": True, "reason": "under the approval threshold", "by": "policy"}
        return {"approved": True, "decision": decision, "log": ["approve"]}
    decision = read_decision(interrupt(approval_request(state)))
    return {"approved": decision["approved"], "decision": decision, "log": ["approve"]}
