def wire(builder):
    builder.add_edge(START, "parse")
    builder.add_edge("parse", "retrieve")
    for node in ("refund", "review", "email"):
        builder.add_edge("retrieve", node)
        builder.add_edge(node, END)
    return builder.compile()
