def branch_before_booking(world_dir, session_id):
    return run_session(world_dir, "What about the 13:05 instead?", resume=session_id).session_id
