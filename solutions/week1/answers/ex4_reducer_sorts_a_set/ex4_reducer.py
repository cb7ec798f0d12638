class AuditState(TypedDict, total=False):
    message: str
    log: Annotated[list[str], lambda old, new: sorted(set(old) | set(new))]
