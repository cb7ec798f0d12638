def approve(state, world):
    """Refunds over the threshold wait for a person; only an explicit yes refunds."""
    if state["cents"] <= APPROVAL_THRESHOLD_CENTS:  # nobody decided, so nobody gave a reason
        return {"approved": True, "decision": {"approved": True, "reason": ""},
                "log": ["approve"]}
    answer = interrupt(approval_request(state))
    said = answer if isinstance(answer, dict) else {}
    reason = said.get("reason")
    if not isinstance(reason, str) or not reason.strip():
        reason = f"no clear answer: {answer!r}"
    decision = {"approved": said.get("approved") is True, "reason": reason}
    return {"approved": decision["approved"], "decision": decision, "log": ["approve"]}
