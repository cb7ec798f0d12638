from course.durable import branch


def fork_with_amount(graph, past_config, cents):
    return graph.invoke(None, branch(graph, past_config, {'refund_cents': cents}))
