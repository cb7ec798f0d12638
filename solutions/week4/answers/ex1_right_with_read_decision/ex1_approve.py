def approve(state, world):
    """Refunds over the threshold wait for a person; only an explicit yes refunds."""
    if state["cents"] > APPROVAL_THRESHOLD_CENTS:
        answer = interrupt(approval_request(state))
        try:
            decision = read_decision(answer)
        except ValueError as unclear:
            reason = answer.get("reason") if isinstance(answer, dict) else None
            decision = {"approved": False,
                        "reason": reason if isinstance(reason, str) and reason.strip()
                        else str(unclear)}
        if decision["approved"] and not decision["reason"]:
            decision["reason"] = "approved by a person, who gave no reason"
    else:
        decision = {"approved": True, "reason": "policy: small refund", "by": "policy"}
    return {"approved": decision["approved"], "decision": decision, "log": ["approve"]}
