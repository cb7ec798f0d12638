def approve(state, world):
    """Refunds over the threshold wait for a person; only an explicit yes refunds."""
    if state["cents"] <= APPROVAL_THRESHOLD_CENTS:
        decision = {"approved": True, "reason": "under the approval threshold"}
        return {"approved": True, "decision": decision, "log": ["approve"]}
    answer = interrupt(approval_request(state))
    decision = {"approved": bool(answer["approved"]), "reason": answer.get("reason", "")}
    return {"approved": decision["approved"], "decision": decision, "log": ["approve"]}
