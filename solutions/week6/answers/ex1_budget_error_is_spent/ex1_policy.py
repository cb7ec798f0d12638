TRANSIENT = {"timeout", "rate_limit", "network", "restart"}


def select_recovery(error_type, budget_exhausted, checkpoint_unusable, is_debugging):
    """Resume, branch or abandon: the questions in a fixed order."""
    if checkpoint_unusable or budget_exhausted or error_type == "budget":
        return Recovery.ABANDON
    if is_debugging:
        return Recovery.BRANCH
    if error_type in TRANSIENT:
        return Recovery.RESUME
    return Recovery.ABANDON
