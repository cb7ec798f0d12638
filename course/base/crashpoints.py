"""Named crash points. Outside the crash harness they do nothing.

Inside a harness worker, :func:`arm` sets one target ``(node, point)``; when the
graph reaches it the worker SIGKILLs itself: no ``finally``, no flush, exactly
like a container that is preempted.

Points per node:
- ``before_effect``: the node started; nothing happened yet.
- ``after_effect``: the node's effect committed (the 200 arrived), but LangGraph
  has not checkpointed the node yet: the lost-200 case.
- ``after_checkpoint``: the checkpoint that records the node as finished is on disk.

:func:`trace_to` makes every point reached leave a line in a file, written with
one unbuffered ``write`` so a SIGKILL right after it loses nothing.
"""

from __future__ import annotations

import os
import signal

POINTS = ("before_effect", "after_effect", "after_checkpoint")

_target: tuple[str, str] | None = None
_finished: str | None = None  # the node whose effect finished and is not checkpointed yet
_trace_fd: int | None = None
_trace_attempt = 0


def arm(node: str, point: str) -> None:
    if point not in POINTS:
        raise ValueError(f"unknown crash point {point!r}; choose one of {', '.join(POINTS)}")
    global _target
    _target = (node, point)


def disarm() -> None:
    global _target, _finished
    _target, _finished = None, None


def trace_to(path: str, attempt: int) -> None:
    """Append ``attempt<TAB>node<TAB>point`` for every point reached to ``path``."""
    global _trace_fd, _trace_attempt
    _trace_fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    _trace_attempt = attempt


def reach(node: str, point: str) -> None:
    """Called by every instrumented node at ``before_effect`` and ``after_effect``."""
    global _finished
    _trace(node, point)
    if point == "after_effect":
        _finished = node
    if _target == (node, point):
        die()


def checkpoint_written() -> None:
    """Called by the harness's saver after every durable ``put``."""
    global _finished
    node, _finished = _finished, None
    if node is None:
        return
    _trace(node, "after_checkpoint")
    if _target == (node, "after_checkpoint"):
        die()


def die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def _trace(node: str, point: str) -> None:
    if _trace_fd is not None:
        os.write(_trace_fd, f"{_trace_attempt}\t{node}\t{point}\n".encode())
