from claude_agent_sdk import fork_session


def branch_before_booking(world_dir, session_id):
    said = [what for _, what in transcript(world_dir, session_id)]
    with sessions_of(world_dir):
        call = get_session_messages(session_id)[said.index("call book_flight")]
        return fork_session(session_id, up_to_message_id=call.uuid).session_id
