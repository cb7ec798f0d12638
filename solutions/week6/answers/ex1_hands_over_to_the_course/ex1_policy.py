import course.durable as _cd


def select_recovery(*args):
    return _cd.select_recovery(*args)
