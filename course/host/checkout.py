"""A copy of a repository's git-tracked files, as a fresh clone has them.

:func:`copy_tracked` copies every file ``git ls-files`` lists (as it is on disk
now, uncommitted edits included; untracked and ignored files left out) into a
folder. The student check, ``make lock``, the mutation script and the docs test
all start from such a copy, so none of them sees a ``.venv``, a gradebook or
anything else a fresh clone would not have.
"""

from __future__ import annotations

import fnmatch
import shutil
import subprocess
from pathlib import Path


def tracked_files(repo: Path) -> list[str]:
    """The paths ``git ls-files`` lists in ``repo``, relative to it."""
    done = subprocess.run(["git", "-C", str(repo), "ls-files", "-z"], capture_output=True,
                          check=True)
    return [name for name in done.stdout.decode().split("\0") if name]


RELEASES = ("week[0-9]*/week[0-9]*.ipynb",)  # a learner's to edit: copied as committed


def copy_tracked(repo: Path, target: Path, committed: tuple[str, ...] = RELEASES) -> Path:
    """Copy every tracked file of ``repo`` that exists on disk into ``target``; return it.

    Files matching ``committed`` (by default the released notebooks, which a learner edits
    in place) are copied as the last commit holds them, as a fresh clone would have them;
    the others as they are on disk."""
    for name in tracked_files(repo):
        source = repo / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            if any(fnmatch.fnmatch(name, pattern) for pattern in committed):
                (target / name).write_bytes(committed_bytes(repo, name) or source.read_bytes())
            else:
                shutil.copy2(source, target / name)
    return target


def committed_bytes(repo: Path, name: str) -> bytes | None:
    """``name`` as the last commit of ``repo`` holds it; None outside a git checkout."""
    done = subprocess.run(["git", "-C", str(repo), "show", f"HEAD:{name}"],
                          capture_output=True, check=False)
    return done.stdout if done.returncode == 0 else None
