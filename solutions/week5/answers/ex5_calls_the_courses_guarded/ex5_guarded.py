from course.durable import guarded as _theirs


def guarded(session_id, step, fn, args, *, store):
    return _theirs(session_id, step, fn, args, store=store)
