def wire(builder):
    builder.add_edge(START, "parse")
    builder.add_edge("parse", "refund")
    builder.add_edge("parse", "review")
    builder.add_edge("refund", "email")
    builder.add_edge("email", END)
    builder.add_edge("review", END)
    return builder.compile()
