def first_changed_step(records):
    previous = None
    for record in records:
        if previous is not None and record.model_version != previous:
            return record.step
        previous = record.model_version
    return None
