def wire(builder):
    builder.add_edge(START, "parse")
    builder.add_edge("parse", "retrieve")
    builder.add_edge("retrieve", "refund")
    builder.add_edge("retrieve", "review")
    builder.add_edge(["refund", "review"], "email")
    builder.add_edge("email", END)
    return builder.compile()
