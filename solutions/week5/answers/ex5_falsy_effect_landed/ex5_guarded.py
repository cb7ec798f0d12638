def guarded(session_id, step, fn, args, *, store):
    """Run fn(**args, idem_key=key) at most once for (session_id, step)."""
    ### BEGIN SOLUTION
    rid = record_id(session_id, step)
    digest = args_hash(args)
    record = store.get(rid)
    if record is not None:
        if record.args_hash != digest:
            raise GuardArgsMismatch(f"step {step!r} of {session_id!r} ran with other arguments")
        if record.status == "done":
            return record.result  # finished before: skip the effect
        raise NeedsReconcile(step, record.idem_key, session_id)  # died mid-call: ask first
    key = idem_key(session_id, step, args)
    store.record_intent(rid, key, digest)  # durable BEFORE the effect
    try:
        result = fn(**args, idem_key=key)
    except Exception as error:
        if not error.effect_landed:
            store.clear(rid)  # a definite refusal: nothing happened, nothing to reconcile
        raise  # anything else: the outcome is unknown, the intent stays in flight
    store.record_result(rid, result)  # durable AFTER it lands
    return result
    ### END SOLUTION
