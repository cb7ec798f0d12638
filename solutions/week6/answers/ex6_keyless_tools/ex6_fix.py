def fixed_tools(world, thread_id):
    return support_tools(world, thread_id, keyed=False)
