def recover(error, run_dir, thread_id, *, budget_exhausted=False, tell_customer=print):
    path = Path(run_dir) / "checkpoints.db"
    diagnosis = diagnose_checkpoints(path, thread_id)
    choice = select_recovery(classify_error(error), budget_exhausted, not diagnosis.ok, False)
    if choice is Recovery.RESUME:
        world, _, graph = open_thread(run_dir)
        resume(graph, config_of(thread_id), store=world.records, lookup=world.find_listed)
        return choice
    world = World(run_dir)
    where = {"checkpointer": open_thread(run_dir)[1]} if diagnosis.ok else {"corrupt_file": path}
    abandon(thread_id, store=world.records, lookup=world.find_listed,
            tell_customer=tell_customer, reason=f"we stopped after a {classify_error(error)}",
            **where)
    return choice
