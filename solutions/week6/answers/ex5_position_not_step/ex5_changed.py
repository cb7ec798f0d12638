def first_changed_step(records):
    records = list(records)
    for i in range(1, len(records)):
        before, now = records[i - 1], records[i]
        if (before.model_name, before.model_version) != (now.model_name, now.model_version):
            return i
    return None
