def add_counts(old, new):
    merged = dict(old)
    for name, count in new.items():
        merged[name] = merged.get(name, 0) + count
    return merged


class AuditState(TypedDict, total=False):
    message: str
    log: Annotated[list[str], lambda old, new: old + [line for line in new if line not in old]]
    runs: Annotated[dict[str, int], add_counts]
