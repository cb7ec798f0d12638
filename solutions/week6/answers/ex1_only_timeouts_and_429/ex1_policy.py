TRANSIENT = {"timeout", "rate_limit", "network", "restart"}


def select_recovery(error_type, budget_exhausted, checkpoint_unusable, is_debugging):
    if checkpoint_unusable or budget_exhausted:
        return Recovery.ABANDON
    if is_debugging:
        return Recovery.BRANCH
    if error_type in ("timeout", "rate_limit"):
        return Recovery.RESUME
    return Recovery.ABANDON
