POLICIES = {"parse": RetryPolicy(max_attempts=4, initial_interval=0.05, jitter=False),
            "retrieve": RetryPolicy(max_attempts=4, initial_interval=0.05, jitter=False)}
