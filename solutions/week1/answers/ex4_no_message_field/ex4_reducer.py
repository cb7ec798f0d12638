class AuditState(TypedDict, total=False):
    log: Annotated[list[str], operator.add]
