"""Run a CloudWave graph in a worker process, kill it for real, resume it in another.

How one scenario goes (:meth:`CrashHarness.run`):

1. A fresh run directory holds everything that must outlive a process: the
   world (billing, mail, guard records) and the LangGraph checkpoints
   (``SqliteSaver``, ``durability="sync"``).
2. Attempt 1 is a worker armed with a crash point ``(node, point)``, or with a
   timer (``kill_after_s``, counted from the moment the forked worker starts
   running) after which the parent SIGKILLs it wherever it is: inside a node,
   inside the billing call, between the guard's intent and its result, in the
   middle of a checkpoint write.
3. Later attempts are unarmed workers on the same thread id: they resume from
   the last checkpoint (``invoke(None, config)``). A worker that stops on
   :class:`~course.durable.guard.NeedsReconcile` is followed by a reconciliation in the
   parent (ask the provider about the key) and another resume.
4. When a worker completes, the ledger is read.

Two more faults, for the fuzzer (:mod:`course.crash.fuzz`):

- ``pause_for_s``: the first worker's timer *freezes* it (SIGSTOP) instead of
  killing it. The harness goes on as if it had died (resumers, reconciliation)
  while it is frozen, and wakes it (SIGCONT) ``pause_for_s`` seconds later; it
  then carries on with whatever it was doing, next to the resumers. Its end
  is waited for before the ledger is read, and recorded as a ``woken`` attempt.
- ``aim=("node/point", offset_s)``: the first worker's timer is set again when the
  worker passes that point (or mark, such as ``after_intent``), to ``offset_s`` after the
  instant it passed it; ``kill_after_s`` stays the fallback should it never get there.
  A few tenths of a millisecond are what separates the guard's windows, and a worker's
  start-up alone varies by more: timed from a nearby point, a timer lands in the window it
  was drawn for. The worker reports its points through a pipe as it reaches them.
- ``then_kill=(stage, delay_s)``: one more SIGKILL, ``delay_s`` after a later
  stage starts. Stages count every worker attempt and every reconciliation
  (stage 1 is the first worker), so a kill can land in a resumer or in the
  middle of a reconciliation (which then runs in a forked child).

Why it is fast, and what that does not change:

- Workers are ``fork()``-ed from this process, which has already imported
  LangGraph, so an attempt costs milliseconds instead of a fresh interpreter's
  seconds (``python -m bench`` measures both).
- The graph is built once per scenario, in the parent, and every worker of the
  scenario inherits it through ``fork``. Its world and its checkpointer hold no
  open SQLite connection at that moment: each process opens its own on first
  use (SQLite forbids carrying an open connection across ``fork``, so the
  parent also closes its own before every fork).
- A scenario's database files start as byte copies of a template made once
  per harness by the very same code (:class:`~course.world.World` and
  ``SqliteSaver.setup``), instead of creating five schemas again.
- Durability is untouched: every file is still WAL with ``synchronous=FULL``
  and every checkpoint is written with ``durability="sync"``. Where the files
  live is the caller's choice (``root``); a SIGKILL ends a process, not the
  machine, so a committed transaction is in the kernel's page cache on disk
  and on tmpfs alike. Only power loss tells them apart, and no test here cuts
  the power (see :mod:`course.crash.fuzz`, which runs on tmpfs by default).
"""

from __future__ import annotations

import gc
import json
import os
import shutil
import sqlite3
import struct
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

from langgraph.checkpoint.sqlite import SqliteSaver

from course.base import crashpoints, fork
from course.cloudwave.nodes import DEFAULT_MESSAGE
from course.crash.resume import become_worker, reconcile_pending
from course.crash.scenario import (
    Attempt,
    EffectVerdicts,
    ScenarioResult,
    _attach_trace,
    _checkpoint_marks,
    _left_on_disk,
    _points,
    _trace_of,
)
from course.crash.timers import (
    Progress,
    _delay_for,
    _Frozen,
    _noting_errors,
    _started,
    _wait,
)
from course.crash.worker import (
    CHECKPOINTS,
    DEFAULT_LEASE_S,
    EXIT_DONE,
    EXIT_ERROR,
    EXIT_RECONCILE,
    EXIT_RETRY,
    CrashAwareSaver,
    Factory,
    _read,
    _worker,
    resolve_factory,
    standalone_worker,
)
from course.world import World

__all__ = ["CHECKPOINTS", "DEFAULT_LEASE_S", "EXIT_DONE", "EXIT_ERROR", "EXIT_RECONCILE",
           "EXIT_RETRY", "Attempt", "CrashAwareSaver", "CrashHarness", "EffectVerdicts",
           "Factory", "Progress", "ScenarioResult", "resolve_factory", "standalone_worker"]


class CrashHarness:
    """Kill-and-resume scenarios for one graph factory ``factory(world, checkpointer)``.

    The factory is called once per scenario, in this process, with a world and
    a checkpointer that open their SQLite connections lazily in whichever
    process uses them; every worker of the scenario inherits the built graph.
    """

    def __init__(
        self,
        factory: Factory | str = "keyed",
        *,
        root: str | Path | None = None,
        message: str = DEFAULT_MESSAGE,
        invoice_id: str = "inv_9",
        max_attempts: int = 12,
        lease_s: float = DEFAULT_LEASE_S,
    ) -> None:
        self.name = factory if isinstance(factory, str) else getattr(factory, "__name__", "custom")
        self.factory = resolve_factory(factory)
        self._tmp = None if root else tempfile.TemporaryDirectory(prefix="crash-")
        self.root = Path(root) if root else Path(self._tmp.name)  # removed with the harness
        self.root.mkdir(parents=True, exist_ok=True)
        self.message = message
        self.invoice_id = invoice_id
        self.max_attempts = max_attempts
        self.lease_s = lease_s
        self._template: Path | None = None
        self._count = 0

    def run(
        self,
        node: str | None = None,
        point: str | None = None,
        *,
        kill_after_s: float | None = None,
        thread_id: str | None = None,
        pause_for_s: float | None = None,
        then_kill: tuple[int, float] | None = None,
        aim: tuple[str, float] | None = None,
    ) -> ScenarioResult:
        """One scenario: crash once as asked, then resume until the run completes.

        With ``pause_for_s``, the first worker's timer (``kill_after_s``) freezes it for that
        long instead of killing it; ``then_kill=(stage, delay_s)`` kills a later stage too.
        A crash point the graph cannot reach by name (a node it does not have, a point
        that does not exist) raises :class:`ValueError` naming the valid ones; where the
        kill really landed is on the result (:attr:`ScenarioResult.killed_at`).
        """
        if (node is None) != (point is None):
            raise ValueError("give both node and point, or neither")
        if point is not None and point not in crashpoints.POINTS:
            raise ValueError(f"unknown crash point {point!r}; "
                             f"choose one of {', '.join(crashpoints.POINTS)}")
        if kill_after_s is not None and kill_after_s < 0:
            raise ValueError(f"kill_after_s must be >= 0, got {kill_after_s}")
        if pause_for_s is not None and (kill_after_s is None or pause_for_s < 0):
            raise ValueError("pause_for_s needs kill_after_s (when to freeze) and must be >= 0")
        if aim is not None and (kill_after_s is None or aim[1] < 0):
            raise ValueError("aim needs kill_after_s (the fallback) and an offset >= 0")
        if then_kill is not None and (then_kill[0] < 2 or then_kill[1] < 0):
            raise ValueError(f"then_kill wants (stage >= 2, delay_s >= 0), got {then_kill}")
        self._count += 1
        run_dir = self._fresh_run_dir(f"scenario-{self._count:05d}")
        thread_id = thread_id or f"thread-{self._count}"
        world = World(run_dir, in_flight_lease_s=self.lease_s)
        saver = CrashAwareSaver(run_dir / CHECKPOINTS)
        attempts: list[Attempt] = []
        reconciled = 0
        status = "gave_up"
        try:
            graph = self.factory(world, saver)
        except Exception:
            graph = None
            attempts.append(Attempt(1, _label((node, point) if node else None, kill_after_s),
                                    "error", detail=traceback.format_exc()))
            status = "error"
        if graph is not None and node is not None:
            _check_node(graph, node, self.name, world)
        frozen: _Frozen | None = None
        stage = 0
        for number in range(1, self.max_attempts + 1 if graph is not None else 1):
            stage += 1
            armed = (node, point) if number == 1 and node else None
            timer = kill_after_s if number == 1 else _delay_for(then_kill, stage)
            world.close()  # never carry an open SQLite connection across fork
            attempt = self._attempt(graph, saver, run_dir, thread_id, number, armed, timer,
                                    pause_for_s if number == 1 else None,
                                    aim if number == 1 else None)
            attempts.append(attempt)
            if attempt.outcome == "paused":
                frozen = attempt.frozen
            if attempt.outcome == "completed":
                status = "completed"
                break
            if attempt.outcome == "error":
                status = "error"
                break
            if attempt.outcome == "needs_reconcile":
                stage += 1
                killed = self._reconcile(run_dir, world, _delay_for(then_kill, stage))
                if killed is not None:
                    attempts.append(killed)
                else:
                    reconciled += 1
            elif attempt.outcome == "retry":
                time.sleep(self.lease_s)
        if frozen is not None:
            attempts.append(frozen.wake_and_wait(run_dir, len(attempts) + 1))
        _attach_trace(run_dir, attempts)
        try:
            ledger = world.ledger()
            charges = ledger.count("charges", self.invoice_id)
            emails = ledger.count("emails", self.invoice_id)
            doubles = ledger.doubles()
        finally:
            world.close()
        return ScenarioResult(self.name, node, point, thread_id, self.invoice_id, attempts,
                              charges, emails, reconciled, status, run_dir, doubles)

    # ------------------------------------------------------------------ parent
    def fresh_run_dir(self, name: str) -> Path:
        """A new run directory under ``root``, its databases freshly initialised."""
        return self._fresh_run_dir(name)

    def _fresh_run_dir(self, name: str) -> Path:
        """A new directory whose databases are copies of a freshly initialised world."""
        if self._template is None:
            self._template = _make_template(self.root / "template")
        run_dir = self.root / name
        run_dir.mkdir(parents=True, exist_ok=False)
        for source in self._template.iterdir():
            shutil.copyfile(source, run_dir / source.name)
        return run_dir

    def _attempt(self, graph: Any, saver: CrashAwareSaver, run_dir: Path, thread_id: str,
                 number: int, armed: tuple[str, str] | None, kill_after_s: float | None,
                 pause_for_s: float | None = None,
                 aim: tuple[str, float] | None = None) -> Attempt:
        label = _label(armed, kill_after_s)
        if pause_for_s is not None:
            label = f"pause {pause_for_s * 1000:.0f} ms at {label.removeprefix('timer ')}"
        alive_read, alive_write = os.pipe()
        progress_read, progress_write = os.pipe() if aim and kill_after_s is not None else (
            None, None)
        if progress_write is not None:
            os.set_blocking(progress_write, False)  # a worker never waits for the harness
        def worker() -> int:
            os.close(alive_read)
            if progress_read is not None:
                os.close(progress_read)
            os.write(alive_write, struct.pack("d", time.monotonic()))  # "I am running"
            os.close(alive_write)
            return _worker(graph, saver, run_dir, thread_id, self.message, number, armed,
                           progress_write)

        gc.freeze()  # the worker's collector then skips everything inherited: fewer copied pages
        try:
            child = fork.start(_noting_errors(run_dir, worker))
        finally:
            gc.unfreeze()
            os.close(alive_write)
            if progress_write is not None:
                os.close(progress_write)
        started = _started(alive_read)
        progress = None if progress_read is None else (progress_read, *aim)
        try:
            if pause_for_s is not None and kill_after_s is not None:
                frozen = _Frozen.at(child, started + kill_after_s, pause_for_s, progress)
                if frozen is not None:  # what it reached before it froze (it goes on later)
                    trail, times = _trace_of(run_dir).get(number, ([], []))
                    return Attempt(number, label, "paused", _points(trail), detail="SIGSTOP",
                                   elapsed_s=time.monotonic() - started, frozen=frozen,
                                   trail=trail, trail_s=[t - started for t in times],
                                   started_at=started)
                ended = child.wait()  # it finished before the pause: nothing froze
            else:
                ended = _wait(child, None if kill_after_s is None else started + kill_after_s,
                              progress)
        finally:
            if progress_read is not None:
                os.close(progress_read)
        elapsed = time.monotonic() - started
        marks = _checkpoint_marks(run_dir, number, started)
        if ended.signal:
            left, writes = _left_on_disk(run_dir, thread_id)
            return Attempt(number, label, "killed", detail=ended.signal,
                           elapsed_s=elapsed, checkpoints_s=marks, checkpoints_left=left,
                           writes_left=writes, started_at=started)
        code = ended.code
        outcome = {EXIT_DONE: "completed", EXIT_RECONCILE: "needs_reconcile",
                   EXIT_RETRY: "retry"}.get(code, "error")
        detail = ""
        if outcome == "error":
            detail = _read(run_dir / "error.txt") or f"worker exited with code {code}"
        elif outcome == "needs_reconcile":
            detail = _read(run_dir / "reconcile.json")
        return Attempt(number, label, outcome, detail=detail, elapsed_s=elapsed,
                       checkpoints_s=marks, started_at=started)

    def _reconcile(self, run_dir: Path, world: World,
                   kill_after_s: float | None = None) -> Attempt | None:
        """Settle the guard's in-flight record. With ``kill_after_s`` it runs in a forked
        child that is SIGKILLed then; the killed attempt is returned (``None`` otherwise)."""
        pending = json.loads(_read(run_dir / "reconcile.json"))

        def settle() -> None:
            try:
                reconcile_pending(world, pending["session_id"], pending["step"],
                                  poll_s=self.lease_s / 4)
            finally:
                world.close()

        if kill_after_s is None:
            settle()
            return None
        world.close()
        started = time.monotonic()

        def settle_here() -> int:
            become_worker(run_dir)
            settle()
            return EXIT_DONE

        if _wait(fork.start(_noting_errors(run_dir, settle_here)),
                 started + kill_after_s).signal:
            return Attempt(0, f"reconcile timer {kill_after_s * 1000:.1f} ms", "killed",
                           detail="SIGKILL", elapsed_s=time.monotonic() - started)
        return None


def _check_node(graph: Any, node: str, name: str, world: World) -> None:
    """A crash point armed at a node the graph does not have would never fire: refuse it."""
    names = [n for n in getattr(graph, "nodes", {}) if not n.startswith("__")]
    if names and node not in names:
        world.close()
        raise ValueError(f"the {name} graph has no node {node!r}; "
                         f"choose one of {', '.join(names)}")


def _label(armed: tuple[str, str] | None, kill_after_s: float | None) -> str:
    if armed:
        return "/".join(armed)
    return f"timer {kill_after_s * 1000:.1f} ms" if kill_after_s is not None else ""


def _make_template(directory: Path) -> Path:
    """Initialise a world and an empty checkpoint database once; scenarios copy the files."""
    directory.mkdir(parents=True, exist_ok=True)
    World(directory).close()
    conn = sqlite3.connect(directory / CHECKPOINTS)
    try:
        SqliteSaver(conn).setup()
    finally:
        conn.close()
    leftovers = [p.name for p in directory.iterdir() if not p.name.endswith(".db")]
    if leftovers:  # a WAL still open somewhere: copying would not be a clean snapshot
        raise RuntimeError(f"template {directory} is not closed cleanly: {leftovers}")
    return directory
