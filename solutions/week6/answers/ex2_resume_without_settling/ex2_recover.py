def recover(error, run_dir, thread_id, *, budget_exhausted=False, tell_customer=print):
    path = Path(run_dir) / "checkpoints.db"
    diagnosis = diagnose_checkpoints(path, thread_id)
    spent = budget_exhausted or classify_error(error) == "budget"
    choice = select_recovery(classify_error(error), spent, not diagnosis.ok, False)
    if choice is Recovery.RESUME:
        world, saver, graph = open_thread(run_dir)
        graph.invoke(None, config_of(thread_id), durability="sync")
        return choice
    world = World(run_dir)
    if diagnosis.corrupt:
        where = {"corrupt_file": path}
    elif not path.exists():
        where = {"checkpointer": InMemorySaver()}
    else:
        where = {"checkpointer": open_thread(run_dir)[1]}
    reasons = ["it hit an error we have to look at", "it took too many steps",
               "its saved state could not be found", "its saved state was damaged"]
    reason = (reasons[3] if diagnosis.corrupt else reasons[2] if not diagnosis.ok
              else reasons[1] if spent else reasons[0])
    abandon(thread_id, store=world.records, lookup=world.find_listed,
            tell_customer=tell_customer, reason=reason, **where)
    return choice
