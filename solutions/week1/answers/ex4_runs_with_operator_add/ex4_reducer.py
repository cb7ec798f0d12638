class AuditState(TypedDict, total=False):
    message: str
    log: Annotated[list[str], operator.add]
    runs: Annotated[dict[str, int], operator.add]
