"""Marta's booking agent in the Claude Agent SDK, on the real Claude Code CLI, offline.

The SDK's real code path runs: ``query()`` / :class:`ClaudeSDKClient`, the control
protocol, an in-process MCP server holding the booking tools. The program at
``cli_path`` is the real Claude Code CLI, pinned (:mod:`course.travel.cli` says which one
and where it comes from); only the model is scripted: the CLI's
``ANTHROPIC_BASE_URL`` points at :class:`course.travel.api.ScriptedAPI` on 127.0.0.1,
started for each session and logging every request to ``<world>/api-requests.jsonl``.
Where the real CLI is missing, the course's stand-in (:mod:`course.travel.fake_claude`)
runs instead and :attr:`SessionRun.cli` says so. With ``COURSE_CLAUDE_API=anthropic`` (and
your own ``ANTHROPIC_API_KEY``) no scripted server starts and the CLI asks Anthropic's API.

- :func:`claude_program`: writes the program the SDK starts into a folder, returns its
  path: a small wrapper that records the CLI's pid and asks the kernel to SIGKILL the CLI
  when the Python process that started it dies (``setpriv --pdeathsig KILL``), so a
  session killed mid-booking kills the CLI too, as a container that dies takes both.
  setpriv is Linux's; elsewhere (macOS) the CLI ends when its stdin closes, and
  :func:`stop_leftover_clis` ends one that does not.
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
import contextlib
import json
import os
import signal
import stat
import sys
import threading
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from course.travel.airline import TravelWorld
from course.travel.api import ScriptedAPI
from course.travel.booking import TRIP, Book, book_once, describe
from course.travel.cli import Cli, find
from course.travel.deep import ASK

SERVER = "travel"
SEARCH = {"tool": f"mcp__{SERVER}__search_flights",
          "input": {"origin": "MAD", "destination": "BCN", "date": "2026-03-14"}}
BOOK = {"tool": f"mcp__{SERVER}__book_flight", "input": {"flight_id": "VY1042"}}
CONFIG = "claude-config"
API_LOG = "api-requests.jsonl"   # every request the scripted model got, one JSON line each
PIDS = "claude-pids"             # the pid of every CLI started for this desk, one a line
OFFLINE_KEY = "sk-ant-course-offline-not-a-key"
CALL_ON_DISK_S = 10.0            # how long book_flight waits for its call to be on disk
MAX_TURNS = 12                   # a model that loops ends with an error, not never
MARTA_SCRIPT = [SEARCH, BOOK, {"text": "Marta is booked on VY1042 to Barcelona."}]


@dataclass
class SessionRun:
    """What one ``query()`` produced."""

    session_id: str | None = None          # from the init message: there even after a crash
    result_session_id: str | None = None   # from the result message: only if the run finished
    messages: list[Any] = field(default_factory=list)
    user_message_ids: list[str] = field(default_factory=list)
    result: str | None = None
    cli: str = ""                          # which claude ran, and its version
    cli_version: str | None = None         # the version the CLI's init message reports
    error: str | None = None               # the CLI's error, when it ended with one
    raised: str | None = None              # what the SDK raised then (``ResultError``)


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


def claude_program(folder: str | Path, cli: Cli) -> Path:
    """The program the SDK starts for ``cli``, written into ``folder`` (see the docstring)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    if cli.real:
        target = f"'{cli.path}'"
    else:
        target = f"'{sys.executable}' -I '{Path(__file__).with_name('fake_claude.py')}'"
    path = folder / ("claude" if cli.real else "claude-stand-in")
    path.write_text(
        "#!/bin/sh\n"
        "# Written by course.travel.claude: the CLI's pid goes to $COURSE_CLAUDE_PIDS, and the\n"
        "# kernel SIGKILLs the CLI when the process that started it dies (where setpriv is).\n"
        '[ -n "$COURSE_CLAUDE_PIDS" ] && echo $$ >> "$COURSE_CLAUDE_PIDS"\n'
        "if command -v setpriv >/dev/null 2>&1; then\n"
        f'  exec setpriv --pdeathsig KILL -- {target} "$@"\n'
        "fi\n"
        f'exec {target} "$@"\n')
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def real_model() -> bool:
    """``COURSE_CLAUDE_API=anthropic``: the CLI asks Anthropic's API, with your own key."""
    return os.environ.get("COURSE_CLAUDE_API", "").strip().lower() == "anthropic"


def travel_server(world: TravelWorld, trip_id: str = TRIP, book: Book = book_once,
                  before_booking: Callable[[], None] | None = None) -> Any:
    """``search_flights`` and ``book_flight`` as an in-process SDK MCP server;
    ``before_booking()`` runs first in every ``book_flight`` call."""
    from claude_agent_sdk import create_sdk_mcp_server, tool

    @tool("search_flights", "Flights from origin to destination on date (YYYY-MM-DD)",
          {"origin": str, "destination": str, "date": str})
    async def search_flights(args: dict[str, Any]) -> dict[str, Any]:
        found = world.airline.search(args["origin"], args["destination"], args["date"])
        return {"content": [{"type": "text", "text": json.dumps(found)}]}

    @tool("book_flight", "Book a seat on flight_id for Marta and charge the fare",
          {"flight_id": str})
    async def book_flight(args: dict[str, Any]) -> dict[str, Any]:
        if before_booking is not None:
            before_booking()
        booking = book(world, trip_id, args["flight_id"])
        return {"content": [{"type": "text", "text": describe(booking)}]}

    return create_sdk_mcp_server(SERVER, tools=[search_flights, book_flight])


def options(world: TravelWorld, *, book: Book = book_once, trip_id: str = TRIP,
            script: list[dict[str, Any]] | None = None, resume: str | None = None,
            fork_session: bool = False, session_id: str | None = None,
            file_checkpointing: bool = False, cli: Cli | None = None,
            api_url: str | None = None,
            before_booking: Callable[[], None] | None = None) -> Any:
    """``ClaudeAgentOptions`` for Marta's desk in ``world``'s folder, running ``cli``
    (default: :func:`course.travel.cli.find`) against the scripted API at ``api_url``."""
    from claude_agent_sdk import ClaudeAgentOptions

    cli = cli or find()
    desk = world.directory / "desk"
    desk.mkdir(exist_ok=True)
    extra: dict[str, str | None] = {"replay-user-messages": None} if file_checkpointing else {}
    env = {"CLAUDE_CONFIG_DIR": str(config_dir(world)),
           "COURSE_CLAUDE_PIDS": str(world.directory / PIDS),
           "FAKE_CLAUDE_SCRIPT": json.dumps(script or MARTA_SCRIPT)}
    if cli.real:
        home = world.directory / "home"  # the CLI's caches and logs stay in the world too
        home.mkdir(exist_ok=True)
        env.update(HOME=str(home), DISABLE_AUTOUPDATER="1",
                   CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", ENABLE_TOOL_SEARCH="false")
        if api_url is not None:
            env.update(ANTHROPIC_BASE_URL=api_url, ANTHROPIC_API_KEY=OFFLINE_KEY)
    return ClaudeAgentOptions(
        cli_path=claude_program(world.directory / "bin", cli), cwd=str(desk),
        mcp_servers={SERVER: travel_server(world, trip_id, book, before_booking)},
        allowed_tools=[f"mcp__{SERVER}__search_flights", f"mcp__{SERVER}__book_flight",
                       "Read", "Write"],
        resume=resume, fork_session=fork_session, session_id=session_id, max_turns=MAX_TURNS,
        enable_file_checkpointing=file_checkpointing, extra_args=extra, env=env)


def booking_calls_on_disk(config: Path, session_id: str | None) -> int:
    """How many ``book_flight`` calls the session's transcript file holds right now."""
    if not session_id:
        return 0
    count = 0
    for path in config.glob(f"projects/*/{session_id}.jsonl"):
        with contextlib.suppress(OSError):
            for line in path.read_text().splitlines():
                if f'"mcp__{SERVER}__book_flight"' in line and '"tool_use"' in line:
                    with contextlib.suppress(ValueError):
                        entry = json.loads(line)
                        count += entry.get("type") == "assistant" and any(
                            b.get("type") == "tool_use" and b.get("name", "").endswith(
                                "__book_flight") for b in _blocks(entry))
    return count


def _blocks(entry: dict[str, Any]) -> list[dict[str, Any]]:
    content = (entry.get("message") or {}).get("content")
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def wait_for_call_on_disk(config: Path, session: dict[str, str | None], already: int,
                          timeout_s: float | None = None) -> bool:
    """Wait until the session's transcript holds one more ``book_flight`` call than
    ``already`` (the real CLI writes its transcript every 100 ms, see the module doc)."""
    deadline = time.monotonic() + (CALL_ON_DISK_S if timeout_s is None else timeout_s)
    while time.monotonic() < deadline:
        if booking_calls_on_disk(config, session.get("id")) > already:
            return True
        time.sleep(0.01)
    return False


def _pids(world_dir: str | Path) -> list[int]:
    try:
        return [int(p) for p in (Path(world_dir) / PIDS).read_text().split()]
    except (OSError, ValueError):
        return []


def _running(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie does not): from ``/proc`` on Linux, else psutil."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        if Path("/proc/self/stat").exists():
            return False  # /proc is there and has no such process
        import psutil

        try:
            return psutil.Process(pid).status() not in (psutil.STATUS_ZOMBIE,
                                                        psutil.STATUS_DEAD)
        except Exception:  # psutil.Error, or psutil failing where it cannot look
            return False
    return state not in ("Z", "X")


def stop_leftover_clis(world_dir: str | Path, started_after: int,
                       grace_s: float = 2.0) -> list[int]:
    """SIGKILL the CLIs this desk started (pids past the first ``started_after``) that still
    run after ``grace_s``: a session that ended with the SDK's ``ResultError`` may leave its
    CLI waiting on an open stdin, and a kernel would then wait for it when it stops."""
    leftover = [pid for pid in _pids(world_dir)[started_after:] if _running(pid)]
    deadline = time.monotonic() + grace_s
    while leftover and time.monotonic() < deadline:
        time.sleep(0.05)
        leftover = [pid for pid in leftover if _running(pid)]
    for pid in leftover:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    return leftover


def scripted_api(world_dir: str | Path, script: list[dict[str, Any]] | None,
                 cli: Cli) -> ScriptedAPI | None:
    """The scripted model for one session (None for the stand-in, which plays the script
    itself, or with ``COURSE_CLAUDE_API=anthropic``); started, to be closed after."""
    if not cli.real or real_model():
        return None
    return ScriptedAPI(script or MARTA_SCRIPT, log=Path(world_dir) / API_LOG).start()


def config_dir(world: TravelWorld) -> Path:
    """Where this desk's sessions live: a folder on this machine's disk, nowhere else."""
    return world.directory / CONFIG


def run_session(world_dir: str | Path, prompt: str = ASK, *, book: Book = book_once,
                trip_id: str = TRIP, resume: str | None = None,
                fork_session: bool = False, session_id: str | None = None,
                cli: Cli | None = None) -> SessionRun:
    """One ``query(prompt, options)`` on Marta's desk; ``resume=`` continues a session,
    ``session_id=`` names a new one (so a crashed run's id is known before it starts).

    ``book_flight`` books only once its call is in the session's transcript on disk
    (:func:`wait_for_call_on_disk`): a real airline answers more slowly than the CLI's
    100 ms transcript flush, ours at once. When the CLI ends with an error (a session it
    cannot find), the SDK raises ``ResultError``: its text is kept in ``error``."""
    from claude_agent_sdk import ResultError, ResultMessage, SystemMessage, UserMessage, query

    cli = cli or find()
    config = Path(world_dir) / CONFIG
    session: dict[str, str | None] = {"id": session_id or (resume if not fork_session else None)}
    already = booking_calls_on_disk(config, resume)

    async def go() -> SessionRun:
        world = TravelWorld(world_dir)
        api = scripted_api(world_dir, None, cli)
        run = SessionRun(cli=cli.label)
        started = len(_pids(world_dir))
        try:
            opts = options(world, book=book, trip_id=trip_id, resume=resume,
                           fork_session=fork_session, session_id=session_id, cli=cli,
                           api_url=api.base_url if api else None,
                           before_booking=lambda: wait_for_call_on_disk(config, session, already))
            async for message in query(prompt=prompt, options=opts):
                run.messages.append(message)
                if isinstance(message, SystemMessage) and message.subtype == "init":
                    run.session_id = session["id"] = message.data["session_id"]
                    run.cli_version = message.data.get("claude_code_version")
                elif isinstance(message, UserMessage) and message.uuid:
                    run.user_message_ids.append(message.uuid)
                elif isinstance(message, ResultMessage):
                    run.result_session_id, run.result = message.session_id, message.result
        except ResultError as error:
            run.error = "; ".join(error.errors) if getattr(error, "errors", None) else str(error)
            run.raised = type(error).__name__
        finally:
            world.close()
            if api is not None:
                api.close()
            stop_leftover_clis(world_dir, started)
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
            said = block.get("content")
            if isinstance(said, list):  # MCP results are kept as content blocks
                said = " ".join(b.get("text", "") for b in said if isinstance(b, dict))
            said = str(said)  # an error result is whole: it says what went wrong
            parts.append(f"result {said if block.get('is_error') else said[:60]}")
    return "; ".join(parts)


def write_then_rewind(world_dir: str | Path, path: str | Path, content: str,
                      *, rewind: bool = True, cli: Cli | None = None) -> dict[str, Any]:
    """A client session with file checkpointing: book, overwrite ``path``, then rewind.

    Returns which CLI ran, the file's text after the agent wrote it and after
    ``rewind_files``, the number of bookings, and the session's conversation length before
    and after the rewind (file rewind leaves the conversation alone).
    """
    from claude_agent_sdk import ClaudeSDKClient, ResultMessage, SystemMessage, UserMessage

    cli = cli or find()
    script = [SEARCH, BOOK,
              {"tool": "Write", "input": {"file_path": str(path), "content": content}},
              {"text": "Itinerary written."}]

    async def go() -> dict[str, Any]:
        world = TravelWorld(world_dir)
        api = scripted_api(world_dir, script, cli)
        out: dict[str, Any] = {"cli": cli.label}
        started = len(_pids(world_dir))
        try:
            opts = options(world, script=script, file_checkpointing=True, cli=cli,
                           api_url=api.base_url if api else None)
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
            if api is not None:
                api.close()
            stop_leftover_clis(world_dir, started)
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
