"""Pinned npm packages, installed where every account can use them.

One job for the course's two Node programs: week 7's Claude Code CLI
(:mod:`course.travel.cli`, ``scripts/claude/``) and the hub's configurable-http-proxy
(:mod:`course.term.hub`, ``scripts/hub/``). Each is pinned by a ``package.json`` and
its ``package-lock.json``; :func:`npm_ci` installs exactly the locked tree, and
:func:`world_readable` opens it to every account (graded kernels and the hub's users run
as other accounts than the one that installed it).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

PIN_FILES = ("package.json", "package-lock.json")


def world_readable(top: Path) -> None:
    """Add read (and, on folders and programs, search) permission for every account
    under ``top``, not following symbolic links."""
    for folder, dirs, files in os.walk(top):
        os.chmod(folder, os.stat(folder).st_mode | 0o555)
        for name in files:
            path = Path(folder) / name
            if not path.is_symlink():
                mode = path.stat().st_mode
                os.chmod(path, mode | 0o444 | (0o111 if mode & 0o100 else 0))
        dirs[:] = [d for d in dirs if not (Path(folder) / d).is_symlink()]


def npm_ci(npm: str, pins: Path, into: Path, what: str, error: type[Exception],
           timeout_s: float = 1800) -> None:
    """Copy ``pins``' ``package.json`` and ``package-lock.json`` into ``into`` (a folder
    that exists) and run ``npm ci`` there, without dev dependencies.

    Args:
        npm: the npm program.
        pins: the folder holding the two pin files.
        into: where ``node_modules`` goes.
        what: the package, for the message (``"configurable-http-proxy"``).
        error: the exception class to raise.

    Raises:
        error: one line, ``npm ci of <what> failed: <npm's last line>``.
    """
    for name in PIN_FILES:
        shutil.copy2(Path(pins) / name, Path(into) / name)
    try:
        done = subprocess.run([npm, "ci", "--omit=dev", "--no-audit", "--no-fund",
                               "--loglevel=error"], cwd=into, capture_output=True, text=True,
                              timeout=timeout_s)
    except (OSError, subprocess.TimeoutExpired) as why:
        raise error(f"npm ci of {what} failed: {why}") from None
    if done.returncode:
        lines = [ln for ln in (done.stderr + done.stdout).splitlines() if ln.strip()]
        raise error(f"npm ci of {what} failed: "
                    f"{lines[-1].strip() if lines else done.returncode}")
