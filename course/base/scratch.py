"""A notebook's scratch folder that does not outlive its kernel.

:func:`scratch_folder` makes a new folder in the system's temporary directory and removes
it when the process that made it exits normally: a kernel shut down by JupyterLab (Shut
Down Kernel, Restart) or by nbclient's default graceful shutdown runs Python's exit
handlers, and so does nbgrader's Validate button. Grading shuts kernels down at once,
without them; there :class:`course.sandbox.execute.GradingExecute` removes the kernel's
whole temporary folder instead. Each run of a week's notebook used to leave its worlds behind in
``/tmp``, a few megabytes a run: a day of test runs left 18 GB.

Processes forked from the kernel (the crash workers) inherit the exit handler; only the
process that made the folder removes it, so a worker that exits never takes the
folder from under the notebook. A kernel that is killed (SIGKILL, a crash) leaves its
folder, as before.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path


def scratch_folder(prefix: str) -> Path:
    """A new empty folder ``<tmp>/<prefix>-XXXXXXXX``, removed when this process exits."""
    folder = Path(tempfile.mkdtemp(prefix=f"{prefix}-"))
    owner = os.getpid()

    def remove() -> None:
        if os.getpid() == owner:
            shutil.rmtree(folder, ignore_errors=True)

    atexit.register(remove)
    return folder


RAM_DIR = Path("/dev/shm")
RAM_MIN_FREE = 256 * 1024 * 1024


def ram_or_temp() -> tuple[Path, bool]:
    """A folder for many short-lived files: RAM (``/dev/shm``) if it has room, else the
    system's temporary directory; and whether it is RAM."""
    try:
        if RAM_DIR.is_dir() and os.access(RAM_DIR, os.W_OK) and (
                shutil.disk_usage(RAM_DIR).free >= RAM_MIN_FREE):
            return RAM_DIR, True
    except OSError:
        pass
    return Path(tempfile.gettempdir()), False


def shown_path(path: str | Path) -> str:
    """``path`` as a message shows it: a file in the system's temporary directory by its
    folder's name and its own (``…/tmp9gdcvtyx/checkpoints.db``), since a scratch
    folder's full name (``/tmp/week6-13ywa57u/tmp9gdcvtyx/``) says nothing on a page or
    in a notebook; any other path in full."""
    path = Path(path)
    try:
        path.resolve().relative_to(Path(tempfile.gettempdir()).resolve())
    except ValueError:
        return str(path)
    return f"…/{path.parent.name}/{path.name}" if path.parent.name else str(path)
