def add_counts(old, new):
    merged = dict(old)
    for name, count in new.items():
        merged[name] = merged.get(name, 0) + count
    return merged


class AuditState(TypedDict, total=False):
    log: Annotated[list[str], operator.add]
    runs: Annotated[dict[str, int], add_counts]
