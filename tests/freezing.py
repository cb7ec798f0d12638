"""Freeze a real process in the middle of a step, and thaw it later.

A SIGKILL shows what a *dead* worker leaves behind. A frozen one (SIGSTOP, a
long GC pause, a VM migration, a laptop lid) is worse: it wakes up later and
carries on as if nothing happened. :class:`FrozenChild` forks a child that runs
``body()`` and stops itself with SIGSTOP wherever the body calls
:func:`freeze_here`; the test sees it stopped (``waitpid`` with ``WUNTRACED``),
does what another process would do meanwhile, then :meth:`~FrozenChild.thaw`
lets the child finish and returns what its body returned (or the error it
raised, as ``"ErrorType: message"``).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import time
import traceback
from collections.abc import Callable
from typing import Any


def freeze_here() -> None:
    """Stop this process until someone sends SIGCONT."""
    os.kill(os.getpid(), signal.SIGSTOP)


class FrozenChild:
    """``body()`` in a forked child that is expected to freeze itself once."""

    def __init__(self, body: Callable[[], Any], *, timeout_s: float = 30) -> None:
        self.timeout_s = timeout_s
        self._read, write = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        self.pid = os.fork()
        if self.pid == 0:
            os.close(self._read)
            code = 1
            try:
                try:
                    answer: dict[str, Any] = {"result": body()}
                except Exception as error:
                    answer = {"error": f"{type(error).__name__}: {error}"}
                os.write(write, json.dumps(answer, default=str).encode())
                code = 0
            except BaseException:
                traceback.print_exc(file=sys.__stderr__)
            finally:
                os._exit(code)
        os.close(write)

    def wait_frozen(self) -> None:
        """Return once the child is stopped; fail if it exits or takes too long instead."""
        deadline = time.monotonic() + self.timeout_s
        while time.monotonic() < deadline:
            done, status = os.waitpid(self.pid, os.WNOHANG | os.WUNTRACED)
            if done and os.WIFSTOPPED(status):
                return
            if done:
                raise AssertionError(f"the child ended (status {status}) instead of freezing: "
                                     f"{self._answer()}")
            time.sleep(0.002)
        self.kill()
        raise AssertionError(f"the child did not freeze within {self.timeout_s:g} s")

    def thaw(self) -> dict[str, Any]:
        """SIGCONT, wait for the child to finish; ``{"result": ...}`` or ``{"error": ...}``."""
        os.kill(self.pid, signal.SIGCONT)
        answer = self._answer()
        _, status = os.waitpid(self.pid, 0)
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, (
            f"the thawed child did not finish cleanly (status {status})")
        return answer

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError, ChildProcessError):
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)

    def _answer(self) -> dict[str, Any]:
        chunks = []
        while chunk := os.read(self._read, 1 << 16):
            chunks.append(chunk)
        os.close(self._read)
        return json.loads(b"".join(chunks) or b'{"error": "the child wrote nothing"}')
