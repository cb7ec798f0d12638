"""The grader's end of the attempts pipe: what a sandboxed kernel tried to reach.

A sandboxed kernel (:class:`course.sandbox.managers.SandboxedKernelManager`) holds the
write end of a FIFO, bound read-only inside its walls (:data:`course.sandbox.jail.
ATTEMPTS_INSIDE`); :func:`course.sandbox.kernel.log_attempts` writes one line there for
every attempt to reach a path outside the walls, or to write outside its scratch folder.
:class:`AttemptsPipe` is the other end, which only the grader reads: a notebook cannot
take back a line once written. The manager puts each line on the student's row.
"""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

from course.grader.verdict import one_line


class AttemptsPipe:
    """A FIFO only the grader reads: the sandboxed kernel holds its write end, a thread
    here keeps the first lines it says (at most ``limit``)."""

    def __init__(self, path: Path, writer_uid: int | None, limit: int = 200) -> None:
        self.path, self.lines, self.limit = path, [], limit
        os.mkfifo(path, 0o600)
        self._read = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        self._hold = os.open(path, os.O_WRONLY)  # no end of file before the kernel opens it
        os.set_blocking(self._read, True)
        # The kernel may open it for writing only: others-write for a uid of its own (as
        # root), owner-write for the caller's own uid (bound read-only, so it cannot chmod).
        os.chmod(path, stat.S_IWOTH | stat.S_IRUSR | stat.S_IWUSR if writer_uid is not None
                 else stat.S_IWUSR)
        self._thread = threading.Thread(target=self._drain, daemon=True,
                                        name=f"attempts {path.name}")
        self._thread.start()

    def _drain(self) -> None:
        with os.fdopen(self._read, "rb") as pipe:
            for raw in pipe:
                line = one_line(raw.decode(errors="replace"))
                if line and len(self.lines) < self.limit and line not in self.lines:
                    self.lines.append(line)

    def close(self) -> list[str]:
        """Stop listening once the kernel is gone; every line it said."""
        os.close(self._hold)
        self._thread.join(timeout=5)
        self.path.unlink(missing_ok=True)
        return list(self.lines)

