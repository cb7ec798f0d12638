"""Pause in one process, end it for real, answer from another: the week 4 restart test.

:func:`pause_then_resume` runs a CloudWave graph that waits for a person
(``interrupt()``) across two processes that share nothing but files:

1. Process 1 (forked) opens the world and a ``SqliteSaver`` on files in
   ``run_dir``, builds the graph with ``factory(world, saver)`` and invokes it
   with ``durability="sync"``. When the run pauses, the process notes what it
   was asked (the interrupt values) and how many refunds exist, then SIGKILLs
   itself: no clean shutdown, nothing kept in memory.
2. Process 2 (forked from the caller, not from process 1) opens the same files
   afresh, builds the graph again and sends ``Command(resume=answer)`` with the
   same ``thread_id``. It notes the final state.

The :class:`RestartResult` says how each process ended (``"SIGKILL"`` is the
proof that the first one was killed), their pids, what was asked, and the
ledger afterwards. Nothing raises when the graph misbehaves: the result says
what happened (``paused`` false, ``error`` set) so a test can explain it.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.types import Command

from course.base import fork
from course.world import World

Factory = Callable[[World, Any], Any]
NOT_PAUSED, NO_CHECKPOINT, FAILED = 3, 4, 1


@dataclass
class RestartResult:
    first_ended: str  # "SIGKILL" when the paused process was killed as planned
    second_ended: str  # "exit 0" when the resume finished
    first_pid: int
    second_pid: int
    paused: bool  # the first process stopped at an interrupt
    asked: list[Any] = field(default_factory=list)  # the interrupt values, in order
    refunds_while_paused: int = 0
    final: dict[str, Any] = field(default_factory=dict)  # the state after the resume
    still_waiting: list[Any] = field(default_factory=list)  # interrupts after the resume
    refunds: int = 0
    webhooks: int = 0
    error: str = ""  # the last line of an error in either process

    @property
    def killed_while_paused(self) -> bool:
        return self.paused and self.first_ended == "SIGKILL"


def pause_then_resume(factory: Factory, run_dir: str | Path, *, thread_id: str,
                      first_input: dict[str, Any], answer: Any,
                      timeout_s: float = 60) -> RestartResult:
    """See the module docstring. ``run_dir`` must be a new or empty folder."""
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    if any(run_dir.iterdir()):
        raise ValueError(f"{run_dir} is not empty: give each restart test its own folder")
    config = {"configurable": {"thread_id": thread_id}}

    def first() -> int:
        graph = factory(*_open(run_dir))
        graph.invoke(first_input, config, durability="sync")
        waiting = _interrupts(graph, config)
        _note(run_dir / "first.json", {"asked": waiting,
                                       "refunds": _count(run_dir, "refunds")})
        if not waiting:
            return NOT_PAUSED
        os.kill(os.getpid(), signal.SIGKILL)  # end the paused process for real
        return FAILED  # not reached

    def second() -> int:
        world, saver = _open(run_dir)
        if saver.get_tuple(config) is None:
            _note(run_dir / "second.json", {"error": f"no checkpoint for thread {thread_id!r} "
                                            "in the files: the paused run was not saved"})
            return NO_CHECKPOINT
        graph = factory(world, saver)
        final = graph.invoke(Command(resume=answer), config, durability="sync")
        _note(run_dir / "second.json", {"final": {k: v for k, v in final.items()
                                                  if not k.startswith("__")},
                                        "waiting": _interrupts(graph, config)})
        return 0

    first_pid, first_ended = _in_child(first, run_dir / "first.err", timeout_s)
    noted = _read(run_dir / "first.json")
    result = RestartResult(first_ended, "not run", first_pid, 0, bool(noted.get("asked")),
                           asked=noted.get("asked", []),
                           refunds_while_paused=noted.get("refunds", 0),
                           error=_last_line(run_dir / "first.err"))
    if result.killed_while_paused:
        result.second_pid, result.second_ended = _in_child(second, run_dir / "second.err",
                                                           timeout_s)
        noted = _read(run_dir / "second.json")
        result.final = noted.get("final", {})
        result.still_waiting = noted.get("waiting", [])
        result.error = noted.get("error") or _last_line(run_dir / "second.err")
    world = World(run_dir)
    try:
        result.refunds = len(world.billing.refunds())
        result.webhooks = len(world.webhook.deliveries())
    finally:
        world.close()
    return result


def _open(run_dir: Path) -> tuple[World, SqliteSaver]:
    saver = SqliteSaver(sqlite3.connect(run_dir / "checkpoints.db", check_same_thread=False))
    saver.setup()
    return World(run_dir), saver


def _interrupts(graph: Any, config: dict[str, Any]) -> list[Any]:
    return [i.value for i in graph.get_state(config).interrupts]


def _count(run_dir: Path, what: str) -> int:
    world = World(run_dir)
    try:
        return world.ledger().count(what)
    finally:
        world.close()


def _in_child(body: Callable[[], int], errors: Path, timeout_s: float) -> tuple[int, str]:
    """Fork, run ``body`` in the child (its return value is the exit code); ``(pid, how it
    ended)``: ``"exit N"``, a signal's name, or ``"timeout"``."""
    def noting() -> int:
        try:
            return body()
        except BaseException:
            errors.write_text(traceback.format_exc())
            return FAILED

    child = fork.start(noting)
    ended = child.wait(time.monotonic() + timeout_s)
    if ended is None:
        child.kill()
        return child.pid, "timeout"
    return child.pid, str(ended)


def _note(path: Path, data: dict[str, Any]) -> None:
    path.write_text(json.dumps(data, default=str))


def _read(path: Path) -> dict[str, Any]:
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        return {}


def _last_line(path: Path) -> str:
    try:
        lines = [ln for ln in path.read_text().strip().splitlines()
                 if ln.strip() and not ln.startswith("During task")]
    except FileNotFoundError:
        return ""
    return lines[-1] if lines else ""
