def wire(builder):
    """The same plan with the builder's entry and finish points and a loop over the edges."""
    builder.set_entry_point("parse")
    for source, target in (("parse", "retrieve"), ("retrieve", "refund"),
                           ("retrieve", "review"), ("refund", "email")):
        builder.add_edge(source, target)
    for last in ("email", "review"):
        builder.set_finish_point(last)
    return builder.compile()
