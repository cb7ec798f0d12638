def approve(state, world):
    """Refunds over the threshold wait for a person; the decision goes into the state."""
    ### BEGIN SOLUTION
    answer = interrupt(approval_request(state))
    decision = {"approved": bool(answer["approved"]), "reason": answer.get("reason", "")}
    return {"approved": decision["approved"], "decision": decision, "log": ["approve"]}
    ### END SOLUTION
