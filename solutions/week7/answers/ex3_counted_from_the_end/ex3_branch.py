from claude_agent_sdk import fork_session


def branch_before_booking(world_dir, session_id):
    with sessions_of(world_dir):
        listed = get_session_messages(session_id)
        # the booking call, its answer and the final text are the last three messages
        return fork_session(session_id, up_to_message_id=listed[-4].uuid).session_id
