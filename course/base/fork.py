"""Fork a child that runs a body, wait for it (with a deadline), kill it, read how it ended.

The one place in ``course`` that forks and waits. It promises:

- :func:`start` flushes ``sys.stdout`` and ``sys.stderr``, forks, and runs ``body()`` in
  the child, which never returns into the caller's code: it always leaves with
  ``os._exit``, with the int ``body`` returned as exit code (``None`` and any other
  value: 0), or 1 when ``body`` raised (the traceback goes to ``sys.__stderr__``).
  With ``own_group`` the child leads a process group of its own, and a kill reaches
  every process it started.
- :class:`Child` waits without blocking (:meth:`~Child.poll`), until a deadline
  (:meth:`~Child.wait`, :meth:`~Child.outlives`, both on the monotonic clock), or
  until the child stops (:meth:`~Child.wait_stopped`); it kills (SIGKILL, and reaps),
  stops (SIGSTOP) and continues (SIGCONT) the child. A reaped child is never signalled
  again (its pid may already be another process's).
- :class:`Exit` is how a child ended: an exit code or a signal's name (and the raw wait
  status).

It needs ``os.fork`` and POSIX signals, nothing else: no ``/proc``; ``os.waitid`` (to
look without reaping) and ``os.pidfd_open`` (to sleep until the child ends) are used
where the platform has them (Linux), and polling replaces them where it does not
(macOS before Python 3.13 has no ``waitid``; macOS has no ``pidfd_open``).
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

POLL_S = 0.0005  # how often a child is looked at where nothing can be slept on


@dataclass(frozen=True)
class Exit:
    """How a child ended: ``code`` (it exited) or ``signal`` (a signal's name killed it)."""

    status: int  # the raw wait status, as os.waitpid gives it

    @property
    def code(self) -> int | None:
        return os.WEXITSTATUS(self.status) if os.WIFEXITED(self.status) else None

    @property
    def signal(self) -> str | None:
        if not os.WIFSIGNALED(self.status):
            return None
        number = os.WTERMSIG(self.status)
        try:
            return signal.Signals(number).name
        except ValueError:
            return f"signal {number}"

    @property
    def killed(self) -> bool:
        """It died of SIGKILL."""
        return self.signal == "SIGKILL"

    def __str__(self) -> str:
        return self.signal or f"exit {self.code}"


def start(body: Callable[[], object], *, own_group: bool = False) -> Child:
    """Run ``body()`` in a forked child (see the module for its exit code); the child."""
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        _child(body, own_group)
    if own_group:  # also from here: a kill right after start reaches the group
        with contextlib.suppress(OSError):
            os.setpgid(pid, pid)
    return Child(pid, own_group)


def _child(body: Callable[[], object], own_group: bool) -> None:
    code = 1
    try:
        if own_group:
            os.setpgid(0, 0)
        returned = body()
        code = returned if isinstance(returned, int) and not isinstance(returned, bool) else 0
    except BaseException:  # the child must never return into the caller's code
        with contextlib.suppress(BaseException):
            import traceback

            traceback.print_exc(file=sys.__stderr__)
            sys.__stderr__.flush()
    finally:
        os._exit(code)


class Child:
    """A forked child of this process. ``ended`` is set once it has been reaped."""

    def __init__(self, pid: int, own_group: bool = False) -> None:
        self.pid = pid
        self.own_group = own_group
        self.ended: Exit | None = None

    def __repr__(self) -> str:
        return f"Child(pid={self.pid}, ended={self.ended})"

    # ------------------------------------------------------------------ looking
    def poll(self) -> Exit | None:
        """How it ended, reaping it, or ``None`` at once if it is still running."""
        if self.ended is None:
            done, status = os.waitpid(self.pid, os.WNOHANG)
            if done:
                self.ended = Exit(status)
        return self.ended

    def exited(self) -> bool:
        """Whether it has ended, without blocking. Where ``os.waitid`` is, it is asked
        without reaping; elsewhere the child is reaped (:attr:`ended` keeps its status)."""
        if self.ended is not None:
            return True
        if hasattr(os, "waitid"):
            return os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) \
                is not None
        return self.poll() is not None

    def outlives(self, deadline: float, *, fd: int | None = None,
                 on_read: Callable[[bytes], float | None] | None = None) -> bool:
        """Wait until ``deadline`` (monotonic); whether the child is still running then.

        It is not reaped either way (unless the platform cannot look without reaping).
        With ``fd``, what arrives there meanwhile is handed to ``on_read`` (``b""`` at its
        end, after which ``fd`` is no longer watched); a number it returns is the new
        deadline, and ``fd`` is no longer watched either."""
        pidfd = None
        if self.ended is None and hasattr(os, "pidfd_open"):
            with contextlib.suppress(OSError):
                pidfd = os.pidfd_open(self.pid)
        watched = [x for x in (pidfd, fd) if x is not None]
        try:
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    return not self.exited()
                if pidfd is None and self.exited():
                    return False
                if not watched:
                    time.sleep(min(POLL_S, left))
                    continue
                ready, _, _ = select.select(watched, [], [],
                                            left if pidfd is not None else min(POLL_S, left))
                if pidfd is not None and pidfd in ready:
                    return False  # it ended before the deadline
                if fd is not None and fd in ready:
                    chunk = os.read(fd, 1 << 16)
                    moved = on_read(chunk) if on_read is not None else None
                    if moved is not None:
                        deadline = moved
                    if not chunk or moved is not None:
                        watched.remove(fd)
                        fd = None
        finally:
            if pidfd is not None:
                os.close(pidfd)

    def wait(self, deadline: float | None = None) -> Exit | None:
        """How it ended (reaped); ``None`` if ``deadline`` (monotonic) came first, and the
        child is left running. No deadline: wait as long as it takes."""
        if self.ended is None and deadline is not None and self.outlives(deadline):
            return None
        if self.ended is None:
            self.ended = Exit(os.waitpid(self.pid, 0)[1])
        return self.ended

    def wait_stopped(self, deadline: float) -> bool:
        """Whether it stopped (SIGSTOP, from anyone) before ``deadline``. ``False`` if the
        deadline came first, or if it ended instead (then :attr:`ended` says how)."""
        while self.ended is None:
            done, status = os.waitpid(self.pid, os.WNOHANG | os.WUNTRACED)
            if done and os.WIFSTOPPED(status):
                return True
            if done:
                self.ended = Exit(status)
                break
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.002)
        return False

    # ------------------------------------------------------------------ signals
    def kill(self) -> Exit:
        """SIGKILL it (its whole group if it leads one) and reap it; how it ended (a child
        that had already ended keeps its own ending)."""
        if self.own_group:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pid, signal.SIGKILL)
        self._signal(signal.SIGKILL)
        ended = self.wait()
        assert ended is not None
        return ended

    def stop(self) -> None:
        """SIGSTOP it (it stays stopped until :meth:`cont`)."""
        self._signal(signal.SIGSTOP)

    def cont(self) -> None:
        """SIGCONT it."""
        self._signal(signal.SIGCONT)

    def _signal(self, number: int) -> None:
        if self.ended is None:  # a zombie ignores signals; a reaped pid may be another's
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, number)
