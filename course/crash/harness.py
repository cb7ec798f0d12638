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

import contextlib
import gc
import importlib
import json
import os
import shutil
import sqlite3
import struct
import tempfile
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langgraph.checkpoint.sqlite import SqliteSaver

from course.base import crashpoints, fork
from course.cloudwave.nodes import DEFAULT_MESSAGE, GRAPHS
from course.crash.resume import (
    SETTLED_ELSEWHERE,
    become_worker,
    reconcile_pending,
    thread_finished,
)
from course.durable.guard import NeedsReconcile
from course.world import World
from course.world.billing import KeyInUse

Factory = Callable[[World, Any], Any]

EXIT_DONE, EXIT_ERROR, EXIT_RECONCILE, EXIT_RETRY = 0, 1, 10, 11
DEFAULT_LEASE_S = 0.05  # the simulated provider's in-flight lease inside the harness
CHECKPOINTS = "checkpoints.db"


@dataclass
class Attempt:
    number: int
    armed: str  # "charge/after_effect", "timer 3.1 ms" or "" for a plain resume
    outcome: str  # killed | completed | needs_reconcile | retry | error
    reached: list[tuple[str, str]] = field(default_factory=list)
    detail: str = ""
    # ``reached`` with the trace's marks (``run/started``, ``after_intent``, ...), as
    # "node/point", and when the worker passed each (seconds since its start): the fuzzer's
    trail: list[str] = field(default_factory=list)
    trail_s: list[float] = field(default_factory=list)
    started_at: float = 0.0  # the worker's start (monotonic)
    elapsed_s: float = 0.0  # from the worker's start (just after fork) to its end
    checkpoints_s: list[float] = field(default_factory=list)  # each durable put, since start
    # a killed worker only: what it left for the next one, read from the checkpoint database
    # after it died (see _left_on_disk)
    checkpoints_left: int | None = None
    writes_left: tuple[str, ...] = ()
    frozen: _Frozen | None = field(default=None, repr=False)  # a paused worker, to wake later


class EffectVerdicts:
    """What a run's ``charges``, ``emails`` and ``status`` say about exactly-once."""

    charges: int
    emails: int
    status: str

    @property
    def double_charge(self) -> bool:
        return self.charges > 1

    @property
    def double_email(self) -> bool:
        return self.emails > 1

    @property
    def lost(self) -> bool:
        """The run did not end with its charge and its email (exactly-once needs at-least-once)."""
        return self.status != "completed" or self.charges == 0 or self.emails == 0


@dataclass
class ScenarioResult(EffectVerdicts):
    graph: str
    node: str | None
    point: str | None
    thread_id: str
    invoice_id: str
    attempts: list[Attempt]
    charges: int
    emails: int
    reconciled: int
    status: str  # completed | error | gave_up
    run_dir: Path
    doubles: list[dict[str, Any]] = field(default_factory=list)  # Ledger.doubles(), every invoice

    @property
    def killed(self) -> int:
        return sum(a.outcome == "killed" for a in self.attempts)

    @property
    def kill_landed(self) -> bool:
        """The first worker died of the kill, or was frozen by the pause (a timer can fire
        after the worker finished)."""
        return bool(self.attempts) and self.attempts[0].outcome in ("killed", "paused")

    @property
    def paused(self) -> int:
        return sum(a.outcome == "paused" for a in self.attempts)

    @property
    def killed_at(self) -> tuple[str, str] | None:
        """Where the first worker died: the last crash point it passed, ``("", "start-up")``
        if it died before any, or None if it was not killed."""
        if not self.kill_landed:
            return None
        reached = self.attempts[0].reached
        return reached[-1] if reached else ("", "start-up")

    @property
    def killed_as_armed(self) -> bool:
        """The scenario was armed at ``(node, point)`` and the first worker died right there."""
        return self.node is not None and self.killed_at == (self.node, self.point)

    @property
    def verdict(self) -> str:
        if self.status == "error":
            lines = [line for line in self.attempts[-1].detail.strip().splitlines()
                     if line.strip() and not line.startswith("During task")]  # LangGraph's note
            return "error: " + (lines[-1] if lines else "unknown")[:60]
        if self.node is not None and not self.killed_as_armed:
            return f"NOT KILLED at {self.node}/{self.point} (never reached)"
        problems = [label for flag, label in (
            (self.double_charge, "DOUBLE CHARGE"), (self.double_email, "double email"),
            (self.lost, "LOST")) if flag]
        if problems:
            return ", ".join(problems)
        return "ok (reconciled)" if self.reconciled else "ok"

    def row(self) -> dict[str, Any]:
        return {"node": self.node or "-", "crash point": self.point or "-",
                "runs": len(self.attempts), "charges": self.charges, "emails": self.emails,
                "outcome": self.verdict}


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


def _delay_for(then_kill: tuple[int, float] | None, stage: int) -> float | None:
    return then_kill[1] if then_kill is not None and then_kill[0] == stage else None


class _Frozen:
    """A worker frozen with SIGSTOP, and the timer that will wake it with SIGCONT."""

    def __init__(self, child: fork.Child, pause_for_s: float) -> None:
        self.child = child
        self._timer = threading.Timer(pause_for_s, self._wake)
        self._timer.daemon = True
        self._timer.start()

    @classmethod
    def at(cls, child: fork.Child, deadline: float, pause_for_s: float,
           progress: Progress | None = None) -> _Frozen | None:
        """Freeze ``child`` at ``deadline`` (monotonic, or as ``progress`` moves it);
        ``None`` if it ended before then."""
        if not _outlives(child, deadline, progress):
            return None  # exited (its status is still there to reap)
        child.stop()
        return cls(child, pause_for_s)

    def _wake(self) -> None:
        self.child.cont()

    def wake_and_wait(self, run_dir: Path, number: int) -> Attempt:
        """Let the pause run its course, then wait for the woken worker to end."""
        self._timer.join()
        self._wake()  # in case the timer thread was not scheduled
        ended = self.child.wait()
        if ended.signal:
            return Attempt(number, "woken", "killed", detail=ended.signal)
        code = ended.code
        outcome = {EXIT_DONE: "completed", EXIT_RECONCILE: "needs_reconcile",
                   EXIT_RETRY: "retry"}.get(code, "error")
        return Attempt(number, "woken", outcome,
                       detail=_read(run_dir / "error.txt") if outcome == "error" else "")


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


def _started(alive_read: int) -> float:
    """When the worker began to run (monotonic clock), as it reported through the pipe.

    Timers count from there, not from ``fork()``: on a busy machine the kernel can take
    anywhere from 1 to 100 ms to copy the parent and schedule the child, and nothing
    of the worker happens during that time, so counting it would only blur the instants.
    """
    try:
        stamp = os.read(alive_read, 8)
    finally:
        os.close(alive_read)
    return struct.unpack("d", stamp)[0] if len(stamp) == 8 else time.monotonic()


Progress = tuple[int, str, float]  # (pipe of the worker's trace lines, "node/point", offset)


def _wait(child: fork.Child, deadline: float | None,
          progress: Progress | None = None) -> fork.Exit:
    """Reap ``child``; if ``deadline`` (monotonic, or as ``progress`` moves it) comes first,
    SIGKILL it there and then."""
    if deadline is not None and _outlives(child, deadline, progress):
        return child.kill()
    ended = child.wait()
    assert ended is not None
    return ended


def _outlives(child: fork.Child, deadline: float, progress: Progress | None = None) -> bool:
    """Wait until ``deadline`` (monotonic); whether ``child`` is still running then (it is
    not reaped either way). With ``progress = (fd, "node/point", offset)`` the deadline
    becomes ``offset`` after the instant the worker wrote that it passed the point (its
    own clock: how late this process reads the line does not matter), when it does."""
    if progress is None:
        return child.outlives(deadline)
    fd, aimed_at, offset = progress
    pending = b""

    def on_read(chunk: bytes) -> float | None:
        nonlocal pending
        *lines, pending = (pending + chunk).split(b"\n")
        for line in lines:
            _, node, point, stamp = line.decode().split("\t")
            if f"{node}/{point}" == aimed_at:
                return float(stamp) + offset
        return None

    return child.outlives(deadline, fd=fd, on_read=on_read)


def _noting_errors(run_dir: Path, body: Callable[[], int]) -> Callable[[], int]:
    """``body`` for a forked worker: what it raises goes to ``error.txt``, exit ``EXIT_ERROR``."""
    def noted() -> int:
        try:
            return body()
        except BaseException:
            with contextlib.suppress(BaseException):
                _write(run_dir / "error.txt", traceback.format_exc())
            return EXIT_ERROR
    return noted


# ------------------------------------------------------------------ worker side
_timeline_fd: int | None = None
_timeline_attempt = 0


class CrashAwareSaver(SqliteSaver):
    """A SqliteSaver on a file, safe to build before ``fork``, that tells the crash points
    when a checkpoint is on disk.

    ``conn`` is opened on first use in each process, so a graph compiled in
    the parent can be inherited by forked workers. Pass an open connection
    instead of a path to use it as it is (single process only).
    """

    def __init__(self, path_or_conn: str | Path | sqlite3.Connection) -> None:
        self._path = None if isinstance(path_or_conn, sqlite3.Connection) else Path(path_or_conn)
        self._conn_pid: int | None = None
        self._connection: sqlite3.Connection | None = None
        super().__init__(path_or_conn if self._path is None else None)  # type: ignore[arg-type]

    @property
    def conn(self) -> sqlite3.Connection:  # type: ignore[override]
        if self._connection is None or self._conn_pid != os.getpid():
            if self._path is None:
                raise RuntimeError("this saver's connection belongs to another process")
            self._connection = sqlite3.connect(self._path, check_same_thread=False)
            self._conn_pid = os.getpid()
            self.is_setup = False
            self.lock = threading.Lock()
        return self._connection

    @conn.setter
    def conn(self, value: sqlite3.Connection | None) -> None:
        self._connection = value
        self._conn_pid = os.getpid() if value is not None else None

    def put_writes(self, config, writes, task_id, task_path=""):
        super().put_writes(config, writes, task_id, task_path)
        crashpoints.writes_saved(task_path)

    def put(self, config, checkpoint, metadata, new_versions):
        crashpoints.await_writes()  # the node's write record first (langgraph issue 8039)
        saved = super().put(config, checkpoint, metadata, new_versions)
        if _timeline_fd is not None:  # one unbuffered write: a kill right after loses nothing
            os.write(_timeline_fd, f"{_timeline_attempt}\t{time.monotonic():.6f}\n".encode())
        crashpoints.checkpoint_written()
        return saved


def _worker(graph: Any, saver: SqliteSaver, run_dir: Path, thread_id: str, message: str,
            number: int, armed: tuple[str, str] | None, progress_fd: int | None = None) -> int:
    global _timeline_fd, _timeline_attempt
    become_worker(run_dir)
    crashpoints.trace_to(str(run_dir / "trace.log"), number, progress_fd)
    _timeline_fd = os.open(run_dir / "timeline.log", os.O_WRONLY | os.O_APPEND | os.O_CREAT,
                           0o644)
    _timeline_attempt = number
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


def _trace_of(run_dir: Path) -> dict[int, tuple[list[str], list[float]]]:
    """Per attempt: every point and mark it passed ("node/point"), and when (monotonic)."""
    by_attempt: dict[int, tuple[list[str], list[float]]] = {}
    for line in _read(run_dir / "trace.log").splitlines():
        number, node, point, stamp = line.split("\t")
        trail, times = by_attempt.setdefault(int(number), ([], []))
        trail.append(f"{node}/{point}")
        times.append(float(stamp))
    return by_attempt


def _points(trail: list[str]) -> list[tuple[str, str]]:
    """The crash points of a trail, without the marks only the fuzzer reads."""
    pairs = [tuple(label.split("/", 1)) for label in trail]
    return [(node, point) for node, point in pairs if point in crashpoints.POINTS]


def _attach_trace(run_dir: Path, attempts: list[Attempt]) -> None:
    by_attempt = _trace_of(run_dir)
    paused = next((a for a in attempts if a.outcome == "paused"), None)
    for attempt in attempts:
        if attempt is paused:
            continue  # keeps what it reached before the freeze
        if attempt.armed == "woken" and paused is not None:  # the rest of the frozen worker
            trail = by_attempt.get(paused.number, ([], []))[0][len(paused.trail):]
            attempt.reached, attempt.trail = _points(trail), trail
            continue
        trail, times = by_attempt.get(attempt.number, ([], []))
        attempt.reached, attempt.trail = _points(trail), trail
        attempt.trail_s = [round(t - attempt.started_at, 6) for t in times]


# channels of a write record that do not mean "the node finished": its error, its
# interrupt, the answer to an interrupt, a scheduled task
_NOT_FINISHED = ("__error__", "__interrupt__", "__resume__", "__scheduled__")


def _left_on_disk(run_dir: Path, thread_id: str) -> tuple[int, tuple[str, ...]]:
    """What the checkpoint database holds for ``thread_id`` now: the number of checkpoints,
    and the nodes whose write records sit on the newest one (they finished in the step that
    was running, so the next worker applies their writes instead of running them). Read with
    a connection of its own, closed before the next fork. The timeline marks
    (``checkpoints_s``) cannot say this: a worker killed between a background ``put`` and
    its mark, or whose write record landed without a step checkpoint, is only seen here."""
    conn = sqlite3.connect(run_dir / CHECKPOINTS)
    try:
        newest = conn.execute(
            "SELECT COUNT(*), MAX(checkpoint_id) FROM checkpoints"
            " WHERE thread_id = ? AND checkpoint_ns = ''", (thread_id,)).fetchone()
        if not newest[0]:
            return 0, ()
        paths = conn.execute(
            "SELECT task_path FROM writes WHERE thread_id = ? AND checkpoint_ns = ''"
            f" AND checkpoint_id = ? AND channel NOT IN ({', '.join('?' * len(_NOT_FINISHED))})"
            " ORDER BY rowid", (thread_id, newest[1], *_NOT_FINISHED)).fetchall()
    finally:
        conn.close()
    nodes = [path.rsplit(", ", 1)[-1] for (path,) in paths if path]
    return newest[0], tuple(dict.fromkeys(nodes))


def _checkpoint_marks(run_dir: Path, number: int, started: float) -> list[float]:
    marks = []
    for line in _read(run_dir / "timeline.log").splitlines():
        attempt, _, stamp = line.partition("\t")
        if attempt == str(number):
            marks.append(float(stamp) - started)
    return marks


def resolve_factory(factory: Factory | str) -> Factory:
    """``"naive"``, ``"keyed"``, ``"package.module:function"`` or a callable."""
    if callable(factory):
        return factory
    if factory in GRAPHS:
        return GRAPHS[factory]
    if ":" in factory:
        module, _, attr = factory.partition(":")
        found = getattr(importlib.import_module(module), attr, None)
        if callable(found):
            return found
        raise ValueError(f"{factory!r}: {module} has no callable {attr!r}")
    raise ValueError(f"unknown graph {factory!r}: use naive, keyed or module:function")


def _write(path: Path, text: str) -> None:
    Path(path).write_text(text)


def _read(path: Path) -> str:
    try:
        return Path(path).read_text()
    except FileNotFoundError:
        return ""
