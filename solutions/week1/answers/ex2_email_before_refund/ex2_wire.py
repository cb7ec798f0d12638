def wire(builder):
    builder.add_edge(START, "parse")
    builder.add_edge("parse", "retrieve")
    builder.add_edge("retrieve", "email")
    builder.add_edge("email", "refund")
    builder.add_edge("refund", END)
    return builder.compile()
