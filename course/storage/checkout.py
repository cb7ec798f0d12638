"""A copy of a repository's git-tracked files, as a fresh clone has them.

:func:`copy_tracked` copies every file ``git ls-files`` lists (as it is on disk
now, uncommitted edits included; untracked and ignored files left out) into a
folder. The student check, ``make lock``, the mutation script and the docs test
all start from such a copy, so none of them sees a ``.venv``, a gradebook or
anything else a fresh clone would not have.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path


def tracked_files(repo: Path) -> list[str]:
    """The paths ``git ls-files`` lists in ``repo``, relative to it."""
    done = subprocess.run(["git", "-C", str(repo), "ls-files", "-z"], capture_output=True,
                          check=True)
    return [name for name in done.stdout.decode().split("\0") if name]


def copy_tracked(repo: Path, target: Path) -> Path:
    """Copy every tracked file of ``repo`` that exists on disk into ``target``; return it."""
    for name in tracked_files(repo):
        source = repo / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    return target
