"""When the parent kills or freezes a worker: its timers, on top of :mod:`course.base.fork`.

A timer counts from the instant the worker reported it runs (:func:`_started`), or from
a point it reports passing (``aim``); :func:`_wait` SIGKILLs a worker still running at
its deadline, :class:`_Frozen` freezes one then (SIGSTOP) and wakes it later (SIGCONT).
"""

from __future__ import annotations

import contextlib
import os
import struct
import threading
import time
import traceback
from collections.abc import Callable
from pathlib import Path

from course.base import fork
from course.crash.scenario import Attempt
from course.crash.worker import EXIT_DONE, EXIT_ERROR, EXIT_RECONCILE, EXIT_RETRY, _read, _write


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
