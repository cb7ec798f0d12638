POLICIES = {'retrieve': RetryPolicy(), 'refund': RetryPolicy()}
