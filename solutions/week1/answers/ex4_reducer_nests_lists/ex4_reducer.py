class AuditState(TypedDict, total=False):
    message: str
    log: Annotated[list[str], lambda old, new: [*old, new]]
