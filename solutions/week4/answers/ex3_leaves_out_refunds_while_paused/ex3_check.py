def check_restart(factory, run_dir):
    """Pause, kill, approve from a new process: one refund, after the approval."""
    result = pause_then_resume(factory, run_dir, thread_id="restart-check",
                               first_input=ask("restart-check", LARGE),
                               answer={"approved": True, "reason": "invoice verified"})
    assert result.paused and result.first_ended == "SIGKILL", (
        f"the first process did not pause and die: it ended with {result.first_ended}")
    assert result.refunds == 1, f"{result.refunds} refunds after the approval, not 1"
    decision = result.final.get("decision") or {}
    assert decision.get("approved") is True and decision.get("reason") == "invoice verified", (
        f"the final state does not record the approval that was sent: {decision!r}")
    return result
