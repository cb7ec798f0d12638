
def branch(world_dir, session_id, prompt):
    return run_session(world_dir, prompt, resume=session_id).session_id
