"""Helpers the graded notebooks' tests share, so no test helper is pasted twice.

Each one makes a test *real* rather than pretend (the first two live in
:mod:`course.grading.checks_fresh` and :mod:`course.grading.checks_clock`; import
them from here):

- :func:`in_fresh_interpreter` runs a notebook function (for example a key
  builder) in a brand-new Python process with its own hash seed, re-running
  the notebook code it depends on from its source, and returns what it
  returned there. A key that depends on ``hash()``, ``id()``, the process id
  or a per-process random salt made when a cell ran comes back different.
  :func:`portable_source` is how the function travels: its source, plus the
  notebook helpers and constants it uses, plus imports for everything else. A
  function that reads a notebook object that cannot travel (a ``World``, an
  open connection) gets a :class:`NotPortable` error that says which name.
- :func:`perturbed` moves every clock (``time.time``, ``monotonic``,
  ``perf_counter``, ``strftime``, ``datetime.now``, ``date.today``, ...), the
  ``uuid`` generators and the ``random`` seed, so a test can show that a value does not
  depend on when or by which dice it was computed.
- :func:`run_forked` runs a function in a forked child and reports how the
  child ended (``"exit 0"``, ``"exit 1"``, ``"SIGKILL"``), so a test can kill a
  real process in the middle of a step. :func:`kill_self` is the kill: SIGKILL,
  no ``finally``, no flush.
- :func:`course_code_run` calls a function and names every function of the
  ``course`` package that ran meanwhile, so a test can check that a student's
  answer is their own rather than a call into the course's reference code.
- :class:`Spy` wraps an object and records which methods were called.
  :class:`DiesAfter` wraps an object and SIGKILLs the process right after one
  method returns (the effect landed; the caller never heard about it).
- :func:`course_policy_in` sets a notebook's ``select_recovery`` aside for the
  course's own while a block runs, so one exercise's mistake is graded once.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
import types
from collections.abc import Callable, Iterator
from typing import Any

from course.base import crashpoints, fork
from course.grading.checks_clock import CLOCKS, perturbed
from course.grading.checks_fresh import NotPortable, in_fresh_interpreter, portable_source

__all__ = ["CLOCKS", "DiesAfter", "NotPortable", "Spy", "course_code_run", "course_policy_in",
           "in_fresh_interpreter", "kill_self", "perturbed", "portable_source", "run_forked"]


# --------------------------------------------------------------------- forks
def kill_self() -> None:
    """SIGKILL this process: no ``finally``, no flush, like a preempted container."""
    crashpoints.die()


def run_forked(body: Callable[[], Any], *, timeout_s: float = 60,
               process_group: bool = False) -> str:
    """Run ``body()`` in a forked child; return ``"exit <code>"``, the signal's name, or
    ``"timeout"``.

    The child exits 0 when ``body`` returns and 1 when it raises (the traceback
    goes to stderr). A child still running after ``timeout_s`` is killed; with
    ``process_group`` the child leads a process group of its own and the whole group
    is killed, with every process it started.
    """
    def discarding() -> None:  # what ``body`` returns is not an exit code
        body()

    child = fork.start(discarding, own_group=process_group)
    ended = child.wait(time.monotonic() + timeout_s)
    if ended is None:
        child.kill()
        return "timeout"
    return str(ended)


# ------------------------------------------------------- whose code ran
_COURSE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def course_code_run(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> list[str]:
    """Call ``fn(*args, **kwargs)``; return, sorted, the ``module.function`` names of the
    ``course`` package's functions that code outside the package called during the call
    (``[]``: none; what those functions call in turn is not listed).

    Whatever ``fn`` raises is raised again, after the watch is removed."""
    ran: set[str] = set()
    prefix = _COURSE_DIR + os.sep
    here = course_code_run.__code__  # fn itself is called from this frame

    def watch(frame: types.FrameType, event: str, arg: Any) -> None:
        code, caller = frame.f_code, frame.f_back
        inside = caller is not None and caller.f_code is not here \
            and caller.f_code.co_filename.startswith(prefix)  # called by the course itself
        if event == "call" and code.co_filename.startswith(prefix) \
                and not code.co_name.startswith("<") and not inside:
            ran.add(f"{frame.f_globals.get('__name__', '?')}.{code.co_qualname}")

    before = sys.getprofile()
    sys.setprofile(watch)
    try:
        fn(*args, **kwargs)
    finally:
        sys.setprofile(before)
    return sorted(ran)


# --------------------------------------------------------------------- proxies
class Spy:
    """Forwards everything to ``target``; ``calls`` lists ``(method, kwargs)`` in order."""

    def __init__(self, target: Any) -> None:
        self._target = target
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._target, name)
        if not callable(value):
            return value

        def recorded(*args: Any, **kwargs: Any) -> Any:
            self.calls.append((name, {**{f"arg{i}": a for i, a in enumerate(args)}, **kwargs}))
            return value(*args, **kwargs)

        return recorded

    def called(self, name: str) -> int:
        return sum(1 for method, _ in self.calls if method == name)


class DiesAfter:
    """Forwards to ``target``; after ``method`` returns, the process is SIGKILLed."""

    def __init__(self, target: Any, method: str) -> None:
        self._target = target
        self._method = method

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._target, name)
        if name != self._method:
            return value

        def then_die(*args: Any, **kwargs: Any) -> Any:
            value(*args, **kwargs)
            kill_self()

        return then_die


# -------------------------------------------------------------------- swaps
@contextlib.contextmanager
def course_policy_in(namespace: dict[str, Any]) -> Iterator[None]:
    """Run a block with the notebook's ``select_recovery`` set aside for the course's own,
    so a test of what uses the policy does not grade the policy twice; the notebook's
    answer is put back afterwards, even when the block fails."""
    from course.durable.recovery import select_recovery

    missing = object()
    theirs = namespace.get("select_recovery", missing)
    namespace["select_recovery"] = select_recovery
    try:
        yield
    finally:
        if theirs is missing:
            namespace.pop("select_recovery", None)
        else:
            namespace["select_recovery"] = theirs
