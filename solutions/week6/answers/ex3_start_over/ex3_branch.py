def try_in_sandbox(saver, thread_id, values, sandbox):
    graph = keyed_graph(sandbox, saver)
    saver.delete_thread(thread_id)
    return graph.invoke({"thread_id": thread_id, "message": "pay inv_9 for ada@example.com",
                         **values}, config_of(thread_id), durability="sync")
