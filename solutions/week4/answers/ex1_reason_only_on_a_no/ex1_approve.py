def approve(state, world):
    """Refunds over the threshold wait for a person; only an explicit yes refunds."""
    if state["cents"] <= APPROVAL_THRESHOLD_CENTS:
        decision = {"approved": True, "reason": "under the approval threshold"}
        return {"approved": True, "decision": decision, "log": ["approve"]}
    answer = interrupt(approval_request(state))
    if isinstance(answer, dict) and answer.get("approved") is True:
        decision = {"approved": True, "reason": str(answer.get("reason", "")).strip()}
    else:
        reason = answer.get("reason") if isinstance(answer, dict) else None
        if not isinstance(reason, str) or not reason.strip():
            reason = "the answer was not an explicit yes"
        decision = {"approved": False, "reason": reason}
    return {"approved": decision["approved"], "decision": decision, "log": ["approve"]}
