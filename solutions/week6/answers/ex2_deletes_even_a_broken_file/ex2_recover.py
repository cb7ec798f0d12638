def recover(error, run_dir, thread_id, *, budget_exhausted=False, tell_customer=print):
    path = Path(run_dir) / "checkpoints.db"
    diagnosis = diagnose_checkpoints(path, thread_id)
    choice = select_recovery(classify_error(error), budget_exhausted, not diagnosis.ok, False)
    world, saver, graph = open_thread(run_dir)
    if choice is Recovery.RESUME:
        resume(graph, config_of(thread_id), store=world.records, lookup=world.find_listed)
        return choice
    abandon(thread_id, checkpointer=saver, store=world.records, lookup=world.find_listed,
            tell_customer=tell_customer, reason="stopped")
    return choice
