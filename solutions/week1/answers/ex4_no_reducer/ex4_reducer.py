class AuditState(TypedDict, total=False):
    message: str
    log: list[str]
