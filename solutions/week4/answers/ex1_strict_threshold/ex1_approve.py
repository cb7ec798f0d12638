def approve(state, world):
    """Refunds over the threshold wait for a person; the decision goes into the state."""
    ### BEGIN SOLUTION
    if state["cents"] < APPROVAL_THRESHOLD_CENTS:
        decision = {"approved": True, "reason": "under the approval threshold"}
        return {"approved": True, "decision": decision, "log": ["approve"]}
    answer = interrupt(approval_request(state))
    said = answer if isinstance(answer, dict) else {}
    decision = {"approved": said.get("approved") is True,
                "reason": str(said.get("reason") or "no clear yes")}
    return {"approved": decision["approved"], "decision": decision, "log": ["approve"]}
    ### END SOLUTION
