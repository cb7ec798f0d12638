"""Marta's booking agent in the Claude Agent SDK, offline through a stand-in ``claude``.

The SDK's real code path runs: ``query()`` / :class:`ClaudeSDKClient`, the control
protocol, an in-process MCP server holding the booking tools. Only the program
at ``cli_path`` is ours (:mod:`course.travel.fake_claude`); give a real Claude
Code CLI and an API key instead and the same calls run for real.

- :func:`fake_cli`: writes the stand-in program into a folder, returns its path.
- :func:`travel_server`: the booking tools as an SDK MCP server; ``book_flight``
  books through the function you pass (:func:`course.travel.book_once` guards it).
- :func:`options`: ``ClaudeAgentOptions`` for a desk folder (sessions live in
  ``<desk>/claude-config``: local disk only), with ``resume=`` / ``fork_session=``.
- :func:`run_session`: one ``query()``; returns a :class:`SessionRun` whose
  ``session_id`` comes from the init message (a crash may never send the result).
- :func:`transcript`: a session's conversation as the SDK reads it from disk.
- :func:`write_then_rewind`: a :class:`ClaudeSDKClient` session with file
  checkpointing that overwrites a file, then ``rewind_files()`` to before it.

The SDK calls are async; every function here runs them on a thread of its own,
so they work in a script, in pytest, in a forked child and in a Jupyter kernel
(whose own event loop is already running).
"""

from __future__ import annotations

import asyncio
import json
import os
import stat
import sys
import threading
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from course.travel.airline import TravelWorld
from course.travel.booking import TRIP, Book, book_once, describe
from course.travel.deep import ASK

SERVER = "travel"
SEARCH = {"tool": f"mcp__{SERVER}__search_flights",
          "input": {"origin": "MAD", "destination": "BCN", "date": "2026-03-14"}}
BOOK = {"tool": f"mcp__{SERVER}__book_flight", "input": {"flight_id": "VY1042"}}
CONFIG = "claude-config"
MARTA_SCRIPT = [SEARCH, BOOK, {"text": "Marta is booked on VY1042 to Barcelona."}]


@dataclass
class SessionRun:
    """What one ``query()`` produced."""

    session_id: str | None = None          # from the init message: there even after a crash
    result_session_id: str | None = None   # from the result message: only if the run finished
    messages: list[Any] = field(default_factory=list)
    user_message_ids: list[str] = field(default_factory=list)
    result: str | None = None


def preload() -> None:
    """Import the SDK and the MCP server once, here, so forked processes start warm."""
    from claude_agent_sdk import create_sdk_mcp_server

    create_sdk_mcp_server("warm-up", tools=[])


def fake_cli(folder: str | Path) -> Path:
    """Write the stand-in ``claude`` program into ``folder``; return its path."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "claude"
    program = Path(__file__).with_name("fake_claude.py")  # standard library only: starts fast
    path.write_text(f"#!{sys.executable} -I\nimport runpy\n"
                    f"runpy.run_path({str(program)!r}, run_name='__main__')\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def travel_server(world: TravelWorld, trip_id: str = TRIP, book: Book = book_once) -> Any:
    """``search_flights`` and ``book_flight`` as an in-process SDK MCP server."""
    from claude_agent_sdk import create_sdk_mcp_server, tool

    @tool("search_flights", "Flights from origin to destination on date (YYYY-MM-DD)",
          {"origin": str, "destination": str, "date": str})
    async def search_flights(args: dict[str, Any]) -> dict[str, Any]:
        found = world.airline.search(args["origin"], args["destination"], args["date"])
        return {"content": [{"type": "text", "text": json.dumps(found)}]}

    @tool("book_flight", "Book a seat on flight_id for Marta and charge the fare",
          {"flight_id": str})
    async def book_flight(args: dict[str, Any]) -> dict[str, Any]:
        booking = book(world, trip_id, args["flight_id"])
        return {"content": [{"type": "text", "text": describe(booking)}]}

    return create_sdk_mcp_server(SERVER, tools=[search_flights, book_flight])


def options(world: TravelWorld, *, book: Book = book_once, trip_id: str = TRIP,
            script: list[dict[str, Any]] | None = None, resume: str | None = None,
            fork_session: bool = False, session_id: str | None = None,
            file_checkpointing: bool = False) -> Any:
    """``ClaudeAgentOptions`` for Marta's desk in ``world``'s folder."""
    from claude_agent_sdk import ClaudeAgentOptions

    desk = world.directory / "desk"
    desk.mkdir(exist_ok=True)
    extra: dict[str, str | None] = {"replay-user-messages": None} if file_checkpointing else {}
    return ClaudeAgentOptions(
        cli_path=fake_cli(world.directory / "bin"), cwd=str(desk),
        mcp_servers={SERVER: travel_server(world, trip_id, book)},
        allowed_tools=[f"mcp__{SERVER}__search_flights", f"mcp__{SERVER}__book_flight",
                       "Write"],
        resume=resume, fork_session=fork_session, session_id=session_id,
        enable_file_checkpointing=file_checkpointing, extra_args=extra,
        env={"CLAUDE_CONFIG_DIR": str(config_dir(world)),
             "FAKE_CLAUDE_SCRIPT": json.dumps(script or MARTA_SCRIPT)})


def config_dir(world: TravelWorld) -> Path:
    """Where this desk's sessions live: a folder on this machine's disk, nowhere else."""
    return world.directory / CONFIG


def run_session(world_dir: str | Path, prompt: str = ASK, *, book: Book = book_once,
                trip_id: str = TRIP, resume: str | None = None,
                fork_session: bool = False, session_id: str | None = None) -> SessionRun:
    """One ``query(prompt, options)`` on Marta's desk; ``resume=`` continues a session,
    ``session_id=`` names a new one (so a crashed run's id is known before it starts)."""
    from claude_agent_sdk import ResultMessage, SystemMessage, UserMessage, query

    async def go() -> SessionRun:
        world = TravelWorld(world_dir)
        run = SessionRun()
        try:
            opts = options(world, book=book, trip_id=trip_id, resume=resume,
                           fork_session=fork_session, session_id=session_id)
            async for message in query(prompt=prompt, options=opts):
                run.messages.append(message)
                if isinstance(message, SystemMessage) and message.subtype == "init":
                    run.session_id = message.data["session_id"]
                elif isinstance(message, UserMessage) and message.uuid:
                    run.user_message_ids.append(message.uuid)
                elif isinstance(message, ResultMessage):
                    run.result_session_id, run.result = message.session_id, message.result
        finally:
            world.close()
        return run

    return in_own_thread(go)


def transcript(world_dir: str | Path, session_id: str) -> list[tuple[str, str]]:
    """``(role, what)`` per message of a session, read from disk by the SDK itself."""
    from claude_agent_sdk import get_session_messages

    folder = Path(world_dir) / CONFIG
    previous = os.environ.get("CLAUDE_CONFIG_DIR")
    os.environ["CLAUDE_CONFIG_DIR"] = str(folder)
    try:
        found = get_session_messages(session_id)
    finally:
        if previous is None:
            os.environ.pop("CLAUDE_CONFIG_DIR", None)
        else:
            os.environ["CLAUDE_CONFIG_DIR"] = previous
    return [(m.type, _summary(m.message)) for m in found]


def _summary(message: Any) -> str:
    content = message.get("content") if isinstance(message, dict) else message
    if isinstance(content, str):
        return content
    parts = []
    for block in content or []:
        if block.get("type") == "text":
            parts.append(block["text"])
        elif block.get("type") == "tool_use":
            parts.append(f"call {block['name'].rsplit('__', 1)[-1]}")
        elif block.get("type") == "tool_result":
            parts.append(f"result {str(block.get('content'))[:60]}")
    return "; ".join(parts)


def write_then_rewind(world_dir: str | Path, path: str | Path, content: str,
                      *, rewind: bool = True) -> dict[str, Any]:
    """A client session with file checkpointing: book, overwrite ``path``, then rewind.

    Returns the file's text after the agent wrote it and after ``rewind_files``,
    the number of bookings, and the session's conversation length before and
    after the rewind (file rewind leaves the conversation alone).
    """
    from claude_agent_sdk import ClaudeSDKClient, ResultMessage, SystemMessage, UserMessage

    script = [SEARCH, BOOK, {"tool": "Write", "input": {"file_path": str(path),
                                                         "content": content}},
              {"text": "Itinerary written."}]

    async def go() -> dict[str, Any]:
        world = TravelWorld(world_dir)
        out: dict[str, Any] = {}
        try:
            opts = options(world, script=script, file_checkpointing=True)
            async with ClaudeSDKClient(options=opts) as client:
                await client.query("Book Marta's flight and write her itinerary file.")
                first_user, session_id = None, None
                async for message in client.receive_response():
                    if isinstance(message, SystemMessage) and message.subtype == "init":
                        session_id = message.data["session_id"]
                    if isinstance(message, UserMessage) and first_user is None:
                        first_user = message.uuid
                    if isinstance(message, ResultMessage):
                        break
                out["written"] = Path(path).read_text() if Path(path).exists() else None
                out["messages_before"] = len(transcript(world_dir, session_id))
                if rewind:
                    await client.rewind_files(first_user)
                out["after_rewind"] = Path(path).read_text() if Path(path).exists() else None
                out["messages_after"] = len(transcript(world_dir, session_id))
                out["session_id"] = session_id
            out["bookings"] = world.count("bookings")
            out["charges"] = world.count("charges")
        finally:
            world.close()
        return out

    return in_own_thread(go)


def in_own_thread(make: Callable[[], Coroutine[Any, Any, Any]]) -> Any:
    """Run the coroutine ``make()`` to the end on a new thread with its own event loop."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(make())
        except BaseException as error:  # handed back to the caller's thread
            box["error"] = error

    worker = threading.Thread(target=target, name="claude-agent-sdk")
    worker.start()
    worker.join()
    if "error" in box:
        raise box["error"]
    return box.get("value")
