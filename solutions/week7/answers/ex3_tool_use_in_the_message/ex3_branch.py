import os

from claude_agent_sdk import fork_session, get_session_messages


def branch_before_booking(world_dir, session_id):
    def calls_booking(entry):
        blocks = entry.message.get("content") if isinstance(entry.message, dict) else None
        return any(isinstance(b, dict) and b.get("type") == "tool_use"
                   and b.get("name", "").endswith("book_flight") for b in blocks or [])

    saved = os.environ.get("CLAUDE_CONFIG_DIR")
    os.environ["CLAUDE_CONFIG_DIR"] = str(Path(world_dir) / "claude-config")
    try:
        listed = get_session_messages(session_id)
        at = next(i for i, entry in enumerate(listed) if calls_booking(entry))
        desk = str(Path(world_dir) / "desk")
        return fork_session(session_id, directory=desk,
                            up_to_message_id=listed[at - 1].uuid).session_id
    finally:
        if saved is None:
            os.environ.pop("CLAUDE_CONFIG_DIR", None)
        else:
            os.environ["CLAUDE_CONFIG_DIR"] = saved
