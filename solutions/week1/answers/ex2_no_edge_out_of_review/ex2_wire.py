def wire(builder):
    """parse, retrieve, then refund and review in the same step, email after refund; compiled."""
    builder.add_edge(START, "parse")
    builder.add_edge("parse", "retrieve")
    builder.add_edge("retrieve", "refund")
    builder.add_edge("retrieve", "review")
    builder.add_edge("refund", "email")
    builder.add_edge("email", END)
    return builder.compile()
