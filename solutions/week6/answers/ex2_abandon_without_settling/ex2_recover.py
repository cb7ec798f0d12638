def recover(error, run_dir, thread_id, *, budget_exhausted=False, tell_customer=print):
    path = Path(run_dir) / "checkpoints.db"
    diagnosis = diagnose_checkpoints(path, thread_id)
    choice = select_recovery(classify_error(error), budget_exhausted, not diagnosis.ok, False)
    if choice is Recovery.RESUME:
        world, saver, graph = open_thread(run_dir)
        resume(graph, config_of(thread_id), store=world.records, lookup=world.find_listed)
        return choice
    if not diagnosis.ok:
        reason = "its saved state was damaged"
    elif budget_exhausted:
        reason = "it took too many steps"
    else:
        reason = "it hit an error we have to look at"
    if diagnosis.ok:
        open_thread(run_dir)[1].delete_thread(thread_id)
    else:
        path.rename(path.with_name(path.name + ".broken"))
    tell_customer(f"We stopped working on your request ({reason}). A person will follow up.")
    return choice
