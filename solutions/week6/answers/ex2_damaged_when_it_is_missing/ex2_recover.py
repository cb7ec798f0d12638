def recover(error, run_dir, thread_id, *, budget_exhausted=False, tell_customer=print):
    path = Path(run_dir) / "checkpoints.db"
    diagnosis = diagnose_checkpoints(path, thread_id)
    spent = budget_exhausted or classify_error(error) == "budget"
    choice = select_recovery(classify_error(error), spent, not diagnosis.ok, False)
    if choice is Recovery.RESUME:
        world, _, graph = open_thread(run_dir)
        resume(graph, config_of(thread_id), store=world.records, lookup=world.find_listed)
        return choice
    world = World(run_dir)
    if diagnosis.corrupt:
        where = {"corrupt_file": path}
    elif not path.exists():
        where = {"checkpointer": InMemorySaver()}
    else:
        where = {"checkpointer": open_thread(run_dir)[1]}
    if not diagnosis.ok:
        reason = "its saved state was damaged"
    elif spent:
        reason = "it took too many steps"
    else:
        reason = "it hit an error we have to look at"
    abandon(thread_id, store=world.records, lookup=world.find_listed,
            tell_customer=tell_customer, reason=reason, **where)
    return choice
