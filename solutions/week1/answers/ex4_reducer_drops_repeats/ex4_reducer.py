class AuditState(TypedDict, total=False):
    message: str
    log: Annotated[list[str], lambda old, new: old + [line for line in new if line not in old]]
