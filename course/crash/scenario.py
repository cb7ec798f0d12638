"""What one crash scenario did: its attempts, read from what its workers left on disk.

Promises: :class:`Attempt` is one worker (or reconciliation) and how it ended, with the
points it passed and when (:func:`_attach_trace`, from ``trace.log``), its checkpoints'
times (``timeline.log``) and, if killed, what it left in the checkpoint database
(:func:`_left_on_disk`); :class:`ScenarioResult` says whether a charge or an email was
doubled or lost, and where the first kill landed. Nothing here runs a process.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from course.base import crashpoints
from course.crash.worker import CHECKPOINTS, _read

if TYPE_CHECKING:
    from course.crash.timers import _Frozen


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
