"""Run a CloudWave graph in a worker process, kill it for real, resume it in another.

How one scenario goes (:meth:`CrashHarness.run`):

1. A fresh run directory holds everything that must outlive a process: the
   world (billing, mail, guard records) and the LangGraph checkpoints
   (``SqliteSaver``, ``durability="sync"``).
2. Attempt 1 is a worker armed with a crash point ``(node, point)``, or with a
   timer (``kill_after_s``) after which the parent SIGKILLs it wherever it is.
3. Later attempts are unarmed workers on the same thread id: they resume from
   the last checkpoint (``invoke(None, config)``). A worker that stops on
   :class:`~course.guard.NeedsReconcile` is followed by a reconciliation in the
   parent (ask the provider about the key) and another resume.
4. When a worker completes, the ledger is read.

Workers are ``fork()``-ed from this process, which has already imported
LangGraph, so a scenario costs milliseconds instead of a fresh interpreter's
seconds (see ``bench/``).
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import signal
import sqlite3
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langgraph.checkpoint.sqlite import SqliteSaver

from course import crashpoints
from course.billing import KeyInUse
from course.guard import NeedsReconcile, reconcile
from course.nodes import DEFAULT_MESSAGE, GRAPHS
from course.world import World

Factory = Callable[[World, Any], Any]

EXIT_DONE, EXIT_ERROR, EXIT_RECONCILE, EXIT_RETRY = 0, 1, 10, 11
WORKER_BILLING = {"in_flight_lease_s": 0.2}


@dataclass
class Attempt:
    number: int
    armed: str  # "charge/after_effect", "timer 3.1 ms" or "" for a plain resume
    outcome: str  # killed | completed | needs_reconcile | retry | error
    reached: list[tuple[str, str]] = field(default_factory=list)
    detail: str = ""


@dataclass
class ScenarioResult:
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

    @property
    def killed(self) -> int:
        return sum(a.outcome == "killed" for a in self.attempts)

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

    @property
    def verdict(self) -> str:
        if self.status == "error":
            return "error: " + self.attempts[-1].detail.strip().splitlines()[-1][:60]
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
    """Kill-and-resume scenarios for one graph factory ``factory(world, checkpointer)``."""

    def __init__(
        self,
        factory: Factory | str = "keyed",
        *,
        root: str | Path | None = None,
        message: str = DEFAULT_MESSAGE,
        invoice_id: str = "inv_9",
        max_attempts: int = 12,
    ) -> None:
        self.name = factory if isinstance(factory, str) else getattr(factory, "__name__", "custom")
        self.factory = resolve_factory(factory)
        self._tmp = None if root else tempfile.TemporaryDirectory(prefix="crash-")
        self.root = Path(root) if root else Path(self._tmp.name)  # removed with the harness
        self.root.mkdir(parents=True, exist_ok=True)
        self.message = message
        self.invoice_id = invoice_id
        self.max_attempts = max_attempts
        self._count = 0

    def run(
        self,
        node: str | None = None,
        point: str | None = None,
        *,
        kill_after_s: float | None = None,
        thread_id: str | None = None,
    ) -> ScenarioResult:
        """One scenario: crash once as asked, then resume until the run completes."""
        if (node is None) != (point is None):
            raise ValueError("give both node and point, or neither")
        if point is not None and point not in crashpoints.POINTS:
            raise ValueError(f"unknown crash point {point!r}; "
                             f"choose one of {', '.join(crashpoints.POINTS)}")
        self._count += 1
        run_dir = self.root / f"scenario-{self._count:05d}"
        run_dir.mkdir(parents=True, exist_ok=False)
        thread_id = thread_id or f"thread-{self._count}"
        attempts: list[Attempt] = []
        reconciled = 0
        status = "gave_up"
        for number in range(1, self.max_attempts + 1):
            armed = (node, point) if number == 1 and node else None
            timer = kill_after_s if number == 1 else None
            attempt = self._attempt(run_dir, thread_id, number, armed, timer)
            attempts.append(attempt)
            if attempt.outcome == "completed":
                status = "completed"
                break
            if attempt.outcome == "error":
                status = "error"
                break
            if attempt.outcome == "needs_reconcile":
                reconciled += self._reconcile(run_dir)
            elif attempt.outcome == "retry":
                time.sleep(WORKER_BILLING["in_flight_lease_s"])
        _attach_trace(run_dir, attempts)
        world = World(run_dir)
        try:
            ledger = world.ledger()
            charges = ledger.count("charges", self.invoice_id)
            emails = ledger.count("emails", self.invoice_id)
        finally:
            world.close()
        return ScenarioResult(self.name, node, point, thread_id, self.invoice_id, attempts,
                              charges, emails, reconciled, status, run_dir)

    # ------------------------------------------------------------------ parent
    def _attempt(self, run_dir: Path, thread_id: str, number: int,
                 armed: tuple[str, str] | None, kill_after_s: float | None) -> Attempt:
        label = "/".join(armed) if armed else (
            f"timer {kill_after_s * 1000:.1f} ms" if kill_after_s is not None else "")
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the worker
            code = EXIT_ERROR
            try:
                code = _worker(self.factory, run_dir, thread_id, self.message, number, armed)
            except BaseException:
                _write(run_dir / "error.txt", traceback.format_exc())
            finally:
                os._exit(code)
        if kill_after_s is not None:
            _kill_later(pid, kill_after_s)
        _, status = os.waitpid(pid, 0)
        if os.WIFSIGNALED(status):
            return Attempt(number, label, "killed",
                           detail=signal.Signals(os.WTERMSIG(status)).name)
        code = os.WEXITSTATUS(status)
        outcome = {EXIT_DONE: "completed", EXIT_RECONCILE: "needs_reconcile",
                   EXIT_RETRY: "retry"}.get(code, "error")
        detail = ""
        if outcome == "error":
            detail = _read(run_dir / "error.txt") or f"worker exited with code {code}"
        elif outcome == "needs_reconcile":
            detail = _read(run_dir / "reconcile.json")
        return Attempt(number, label, outcome, detail=detail)

    def _reconcile(self, run_dir: Path) -> int:
        pending = json.loads(_read(run_dir / "reconcile.json"))
        world = World(run_dir)
        try:
            while True:
                try:
                    reconcile(pending["session_id"], pending["step"], store=world.records,
                              lookup=world.find_effect)
                    return 1
                except KeyInUse:  # the provider is still working on it: wait for its answer
                    time.sleep(WORKER_BILLING["in_flight_lease_s"] / 4)
        finally:
            world.close()


def _kill_later(pid: int, delay_s: float) -> None:
    deadline = time.perf_counter() + delay_s
    while True:
        left = deadline - time.perf_counter()
        if left <= 0:
            break
        if os.waitpid(pid, os.WNOHANG) != (0, 0):
            return  # finished before the timer: nothing to kill (and already reaped: put back)
        time.sleep(min(left, 0.0005))
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


# ------------------------------------------------------------------ worker side
class CrashAwareSaver(SqliteSaver):
    """A SqliteSaver that tells the crash points when a checkpoint is on disk."""

    def put(self, config, checkpoint, metadata, new_versions):
        saved = super().put(config, checkpoint, metadata, new_versions)
        crashpoints.checkpoint_written()
        return saved


def _worker(factory: Factory, run_dir: Path, thread_id: str, message: str, number: int,
            armed: tuple[str, str] | None) -> int:
    log = os.open(run_dir / "worker.log", os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    os.dup2(log, 1)
    os.dup2(log, 2)
    sys.stdout = sys.stderr = open(log, "w", buffering=1, closefd=False)  # noqa: SIM115
    crashpoints.disarm()
    crashpoints.trace_to(str(run_dir / "trace.log"), number)
    world = World(run_dir, **WORKER_BILLING)
    saver = CrashAwareSaver(sqlite3.connect(run_dir / "checkpoints.db", check_same_thread=False))
    graph = factory(world, saver)
    config = {"configurable": {"thread_id": thread_id}}
    started = next(iter(saver.list(config, limit=1)), None) is not None
    if started and not graph.get_state(config).next:
        return EXIT_DONE  # an earlier worker finished: nothing to resume
    if armed:
        crashpoints.arm(*armed)
    payload = None if started else {"thread_id": thread_id, "message": message}
    try:
        graph.invoke(payload, config, durability="sync")
    except NeedsReconcile as pending:
        _write(run_dir / "reconcile.json", json.dumps(
            {"session_id": pending.session_id, "step": pending.step, "key": pending.idem_key}))
        return EXIT_RECONCILE
    except KeyInUse:
        return EXIT_RETRY
    return EXIT_DONE


def _attach_trace(run_dir: Path, attempts: list[Attempt]) -> None:
    by_attempt: dict[int, list[tuple[str, str]]] = {}
    for line in _read(run_dir / "trace.log").splitlines():
        number, node, point = line.split("\t")
        by_attempt.setdefault(int(number), []).append((node, point))
    for attempt in attempts:
        attempt.reached = by_attempt.get(attempt.number, [])


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
