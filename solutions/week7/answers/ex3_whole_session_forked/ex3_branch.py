def branch_before_booking(world_dir, session_id):
    fork = run_session(world_dir, "Could Marta fly later instead?", resume=session_id,
                       fork_session=True)
    return fork.session_id
