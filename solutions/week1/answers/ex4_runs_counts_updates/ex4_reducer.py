def count_runs(old, new):
    merged = dict(old)
    for name in new:
        merged[name] = merged.get(name, 0) + 1  # one more run of each name in the update
    return merged


class AuditState(TypedDict, total=False):
    message: str
    log: Annotated[list[str], operator.add]
    runs: Annotated[dict[str, int], count_runs]
