def check_restart(factory, run_dir):
    """Pause, kill, approve from a new process: one refund, after the approval."""
    ### BEGIN SOLUTION
    result = pause_then_resume(factory, run_dir, thread_id="restart-check",
                               first_input=ask("restart-check", LARGE),
                               answer={"approved": True, "reason": "verified"})
    assert result.refunds == 1
    return result
    ### END SOLUTION
