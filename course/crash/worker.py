"""The worker side of the crash harness: what runs in a forked worker, and its exit codes.

:func:`_worker` runs or resumes one thread and returns ``EXIT_DONE``, ``EXIT_RECONCILE``
or ``EXIT_RETRY`` (an armed crash point SIGKILLs it); its trail (``trace.log``,
``timeline.log``, ``reconcile.json``, ``retry.txt``) stays in the run directory.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from langgraph.checkpoint.sqlite import SqliteSaver

from course.base import crashpoints
from course.cloudwave.nodes import DEFAULT_MESSAGE, resolve_factory
from course.crash.resume import SETTLED_ELSEWHERE, become_worker, thread_finished
from course.durable.guard import NeedsReconcile
from course.durable.savers import CrashAwareSaver, time_checkpoints
from course.world import World
from course.world.billing import KeyInUse

Factory = Callable[[World, Any], Any]

EXIT_DONE, EXIT_ERROR, EXIT_RECONCILE, EXIT_RETRY = 0, 1, 10, 11
DEFAULT_LEASE_S = 0.05  # the simulated provider's in-flight lease inside the harness
CHECKPOINTS = "checkpoints.db"


def _worker(graph: Any, saver: SqliteSaver, run_dir: Path, thread_id: str, message: str,
            number: int, armed: tuple[str, str] | None, progress_fd: int | None = None) -> int:
    become_worker(run_dir)
    crashpoints.trace_to(str(run_dir / "trace.log"), number, progress_fd)
    time_checkpoints(os.open(run_dir / "timeline.log", os.O_WRONLY | os.O_APPEND | os.O_CREAT,
                             0o644), number)
    config = {"configurable": {"thread_id": thread_id}}
    started = saver.get_tuple(config) is not None
    if started and thread_finished(graph, config):
        return EXIT_DONE  # an earlier worker finished: nothing to resume
    if armed:
        crashpoints.arm(*armed)
    # a graph from course.crash.with_durability runs another mode than "sync"
    crashpoints.expect_write_records(getattr(graph, "durability", "sync") != "exit")
    payload = None if started else {"thread_id": thread_id, "message": message}
    crashpoints.run_started()
    try:
        graph.invoke(payload, config, durability="sync")
    except NeedsReconcile as pending:
        _write(run_dir / "reconcile.json", json.dumps(
            {"session_id": pending.session_id, "step": pending.step, "key": pending.idem_key}))
        return EXIT_RECONCILE
    except (KeyInUse, *SETTLED_ELSEWHERE) as busy:
        _write(run_dir / "retry.txt", str(busy))  # e.g. "another process finished step ..."
        return EXIT_RETRY
    return EXIT_DONE


def standalone_worker(graph: Factory | str, run_dir: str | Path, thread_id: str, number: int,
                      armed: tuple[str, str] | None = None, *, message: str = DEFAULT_MESSAGE,
                      lease_s: float = DEFAULT_LEASE_S) -> int:
    """One attempt's worker in *this* process, built from scratch (no fork, no warm parent).

    Returns the worker's exit code (``EXIT_DONE``, ``EXIT_RECONCILE``, ...); an armed
    crash point SIGKILLs this process. ``python -m bench`` runs it in fresh interpreters
    to measure what forking from a warm parent saves.
    """
    run_dir = Path(run_dir)
    world = World(run_dir, in_flight_lease_s=lease_s)
    saver = CrashAwareSaver(run_dir / CHECKPOINTS)
    return _worker(resolve_factory(graph)(world, saver), saver, run_dir, thread_id, message,
                   number, armed)


def _write(path: Path, text: str) -> None:
    Path(path).write_text(text)


def _read(path: Path) -> str:
    try:
        return Path(path).read_text()
    except FileNotFoundError:
        return ""
