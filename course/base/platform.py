"""Where the course runs, said once: the Pythons it supports and what it needs of the system.

The course forks processes and kills them with ``SIGKILL`` (weeks 3 to 7, the crash harness,
the graders), reads accounts (``pwd``) and sets resource limits (``resource``): Linux and
macOS have all of it; native Windows has none of it, and Windows runs the course inside
WSL2. This module is the one statement of both, read by:

- ``scripts/supported.py`` (``make setup``, ``make lab``, ``make test``, ``make check``),
  which refuses an unsupported Python or system in one line before anything installs (it
  reads :data:`OLDEST` and :data:`NEWEST` as text: keep them literal tuples);
- ``course/__init__.py``, which refuses to import on a system without them
  (:func:`require_posix`), with the same line instead of an error deep inside week 3;
- the README's "Where it runs" table and ``tests/test_platforms.py``.

It imports only the standard library; the set-up check loads it only under a supported
Python.
"""

from __future__ import annotations

import importlib
import os
import signal
import sys

OLDEST = (3, 11)
"""The oldest Python the course supports (``requires-python`` in ``pyproject.toml``)."""

NEWEST = (3, 14)
"""The newest Python every pin of ``constraints.txt`` has a wheel for, on Linux and macOS
(3.15: ``orjson``'s pinned release has no wheel for it; ``tests/test_platforms.py`` resolves
the pins for each supported version)."""

POSIX_MODULES = ("pwd", "grp", "fcntl", "resource", "termios")
"""Modules of the standard library the course (or what it runs) needs, which native
Windows lacks."""

WSL = ("on Windows, run the course inside WSL2 (in PowerShell: wsl --install; then clone "
       "and run make there): https://learn.microsoft.com/windows/wsl/install")


def posix_problem() -> str | None:
    """One line saying why this system cannot run the course, or None if it can."""
    if sys.platform.startswith(("win", "cygwin", "msys")):
        return f"native Windows cannot run this course (it forks and SIGKILLs processes); {WSL}"
    missing = [name for name in POSIX_MODULES if not _importable(name)]
    if not hasattr(os, "fork") or not hasattr(signal, "SIGKILL"):
        missing.insert(0, "os.fork and signal.SIGKILL")
    if missing:
        return (f"this system lacks {', '.join(missing)}, which the course needs (it forks "
                f"and SIGKILLs processes): run it on Linux or macOS; {WSL}")
    return None


def require_posix() -> None:
    """Raise :class:`UnsupportedSystem` (an ``ImportError``) with :func:`posix_problem`'s
    line where the course cannot run."""
    problem = posix_problem()
    if problem:
        raise UnsupportedSystem(problem)


class UnsupportedSystem(ImportError):
    """The course cannot run on this system; the message says where it can."""


def _importable(name: str) -> bool:
    if name in sys.modules:
        return sys.modules[name] is not None
    try:
        importlib.import_module(name)
    except ImportError:
        return False
    return True
