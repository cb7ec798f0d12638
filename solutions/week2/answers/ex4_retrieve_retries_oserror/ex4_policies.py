def hung_up(error):
    """Retry the model's node only when the provider hung up."""
    return isinstance(error, ConnectionError)


POLICIES = {
    "parse": RetryPolicy(max_attempts=4, initial_interval=0.05, jitter=False, retry_on=hung_up),
    "retrieve": RetryPolicy(max_attempts=4, initial_interval=0.05, jitter=False,
                            retry_on=OSError),
}
