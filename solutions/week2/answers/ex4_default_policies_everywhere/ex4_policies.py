POLICIES = {"parse": RetryPolicy(), "retrieve": RetryPolicy(), "refund": RetryPolicy()}
