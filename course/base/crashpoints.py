"""Named crash points. Outside the crash harness they do nothing.

Inside a harness worker, :func:`arm` sets one target ``(node, point)``; when the
graph reaches it the worker SIGKILLs itself: no ``finally``, no flush, exactly
like a container that is preempted.

Points per node, in the order a run reaches them (:data:`POINTS`):

- ``before_effect``: the node started; nothing happened yet.
- ``before_record``: inside :func:`course.durable.guarded`, the provider has
  committed the effect and answered, but the guard has not recorded the
  result yet: the lost-200 case *for the guard*. On resume the guard finds its
  intent in flight and the provider's key check is what answers. Only nodes
  that call ``guarded`` reach it.
- ``after_effect``: the node's body returned (for a guarded node, the guard's
  record is already written), but LangGraph has saved nothing about it yet.
- ``after_writes``: LangGraph saved the node's write record (``put_writes``),
  the step checkpoint (``put``) is not on disk yet. A resume does **not**
  re-run the node: its saved writes are applied instead.
- ``after_checkpoint``: the step checkpoint that follows the node is on disk.

Between ``before_effect`` and ``before_record`` the guard also leaves ``after_intent`` in the
trace (:func:`intent_recorded`): its intent is durable, the provider not called yet; the
simulated provider leaves ``effect_landed`` once it committed a call (:func:`effect_landed`);
and
the harness's worker leaves ``run/started`` just before it invokes the graph
(:func:`run_started`). They are marks, not points: nothing arms them, but the fuzzer aims
its timers by them (:mod:`course.crash.fuzz`).

The harness's saver calls :func:`writes_saved` after ``put_writes`` and
:func:`checkpoint_written` after ``put``; the node wrapper of
:func:`course.cloudwave.build_graph` calls :func:`reach`; ``guarded`` calls
:func:`provider_answered`.

:func:`trace_to` makes every point reached leave a line in a file, written with
one unbuffered ``write`` so a SIGKILL right after it loses nothing.
"""

from __future__ import annotations

import os
import signal
import threading
import time

POINTS = ("before_effect", "before_record", "after_effect", "after_writes",
          "after_checkpoint")

_target: tuple[str, str] | None = None
_running: str | None = None  # the node whose body is running (for points inside it)
_finished: str | None = None  # the node whose body returned and is not checkpointed yet
_writes_due = False  # a finished node's write record is not saved yet
_write_records = True  # the run saves a write record per node (not so with durability="exit")
_saved = threading.Condition()
_trace_fd: int | None = None
_trace_attempt = 0
_progress_fd: int | None = None


def arm(node: str, point: str) -> None:
    if point not in POINTS:
        raise ValueError(f"unknown crash point {point!r}; choose one of {', '.join(POINTS)}")
    global _target
    _target = (node, point)


def disarm() -> None:
    global _target, _finished, _running
    _target, _finished, _running = None, None, None
    _set_writes_due(False)


def expect_write_records(expected: bool) -> None:
    """Whether this run saves a write record as each node finishes. With
    ``durability="exit"`` LangGraph saves nothing until the run ends, so a step checkpoint
    must not wait for one (:func:`await_writes`) and ``after_writes`` is never reached."""
    global _write_records
    _write_records = expected


def trace_to(path: str, attempt: int, progress_fd: int | None = None) -> None:
    """Append ``attempt<TAB>node<TAB>point<TAB>monotonic time`` for every point reached to
    ``path``, and the same line to ``progress_fd`` if given (a non-blocking pipe to the
    harness, which times a kill from a point; a reader gone or full loses nothing here)."""
    global _trace_fd, _trace_attempt, _progress_fd
    _trace_fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    _trace_attempt = attempt
    _progress_fd = progress_fd


def reach(node: str, point: str) -> None:
    """Called by every instrumented node at ``before_effect`` and ``after_effect``."""
    global _finished, _running
    _trace(node, point)
    if point == "before_effect":
        _running = node
    elif point == "after_effect":
        _finished, _running = node, None
        _set_writes_due(_write_records)
    if _target == (node, point):
        die()


def provider_answered() -> None:
    """Called by the guard between the provider's answer and its own ``record_result``."""
    if _running is None:
        return  # not inside an instrumented node (a notebook cell, a unit test)
    _trace(_running, "before_record")
    if _target == (_running, "before_record"):
        die()


RUN = "run"  # the trace's name for the graph as a whole (``run/started``)


def run_started() -> None:
    """Called by the harness's worker just before it invokes the graph: a trace mark for
    the fuzzer (the run's first checkpoints are written before the first node starts)."""
    _trace(RUN, "started")


def intent_recorded() -> None:
    """Called by the guard once its intent is durable, before it calls the provider."""
    if _running is not None:
        _trace(_running, "after_intent")


def effect_landed() -> None:
    """Called by the simulated provider once a call's effect is committed, before it
    answers: a trace mark for the fuzzer, inside whichever node called it."""
    if _running is not None:
        _trace(_running, "effect_landed")


def writes_saved(task_path: str = "") -> None:
    """Called by the harness's saver after every durable ``put_writes``, with its task path
    (``"~__pregel_pull, charge"``). Only the finished node's own write record counts: a
    late write record of an earlier step, saved while this node ran, is not its window."""
    node = _finished
    if node is None or not _writes_due:
        return
    if task_path and task_path.rsplit(", ", 1)[-1] != node:
        return
    _trace(node, "after_writes")
    if _target == (node, "after_writes"):
        die()  # before the step checkpoint is released (see await_writes)
    _set_writes_due(False)


def await_writes(timeout_s: float = 10.0) -> None:
    """Hold a step checkpoint until the finished node's write record is saved.

    LangGraph 1.2 hands ``put_writes`` and ``put`` to a thread pool and, even with
    ``durability="sync"``, does not wait for the first before the second
    (langgraph issue 8039). The harness's saver calls this first in ``put`` so
    the ``after_writes`` window always exists in the same place. Should the record never
    come, the checkpoint goes ahead after ``timeout_s`` and the trace says
    ``no_write_record`` for that node.
    """
    with _saved:
        came = _saved.wait_for(lambda: not _writes_due, timeout=timeout_s)
    if not came and _finished is not None:  # a harness bug, not a crash: leave a trace of it
        _trace(_finished, "no_write_record")


def checkpoint_written() -> None:
    """Called by the harness's saver after every durable ``put``."""
    global _finished
    node, _finished = _finished, None
    _set_writes_due(False)
    if node is None:
        return
    _trace(node, "after_checkpoint")
    if _target == (node, "after_checkpoint"):
        die()


def _set_writes_due(due: bool) -> None:
    global _writes_due
    with _saved:
        _writes_due = due
        _saved.notify_all()


def die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def _trace(node: str, point: str) -> None:
    global _progress_fd
    if _trace_fd is not None:
        line = f"{_trace_attempt}\t{node}\t{point}\t{time.monotonic()}\n".encode()
        os.write(_trace_fd, line)
        if _progress_fd is not None:
            try:
                os.write(_progress_fd, line)
            except OSError:  # the harness stopped listening: the trace file still has it
                _progress_fd = None
