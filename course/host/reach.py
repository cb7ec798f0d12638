"""Let an unprivileged account reach a few paths below a folder only root may enter.

Root's clones live in private folders (``/root`` is mode 0700, as is a fresh
``mktemp -d``). Work that root hands to an unprivileged account (a grading kernel, a
student's test run, the Postgres server) still needs the interpreter, the virtualenv and
the ``course`` package that sit there. Moving the clone, or opening the private folder to
everyone, would be the instructor's problem; instead, in a mount namespace of the child's
own, :func:`expose` covers each private folder with an empty tmpfs and binds back only the
listed paths (the allow-list, nothing else of the folder: its other files stay out of
reach). The namespace dies with the child; nothing changes for anyone else.

- :func:`closed_ancestor`: the topmost folder above a path that other accounts may not
  enter, if any.
- :func:`expose`: the mounts, run as root inside a private mount namespace; each listed
  path brings along the folders its symbolic links lead to (:func:`with_link_targets`).
- :func:`as_account`: the same for any uid and gid, always (the grading sandbox).
- :func:`command_for`: the command that runs ``command`` as ``account`` with ``paths``
  reachable: ``unshare --mount`` and this module as the entry point when a path needs it
  (as root), else ``None`` (start it as usual).
- ``python -m course.host.reach PLAN``: the entry point (mounts, drop to the
  account with no supplementary groups, exec).

Needs root and ``unshare`` (util-linux); the grading sandbox (:mod:`course.sandbox.jail`)
uses :func:`expose` inside its own namespaces.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path


def closed_ancestor(path: Path) -> Path | None:
    """The topmost folder above ``path`` that other accounts may not enter, if any."""
    return next((p for p in reversed(Path(path).parents) if p != Path("/")
                 and not os.stat(p).st_mode & 0o001), None)


def link_hops(path: str | Path) -> list[str]:
    """The folders a chain of symbolic links from ``path`` passes through (for a link to a
    file) or the folders it ends at (for a link to a folder), in order."""
    hops, seen = [], set()
    current = Path(os.path.abspath(path))
    while current.is_symlink() and current not in seen:
        seen.add(current)
        current = Path(os.path.normpath(current.parent / os.readlink(current)))
        hops.append(str(current if current.is_dir() else current.parent))
    return hops


def with_link_targets(paths: list[str]) -> list[str]:
    """``paths``, then every folder their symbolic links lead through: a path's own links
    and those of a folder's entries (a virtualenv whose ``lib`` or ``bin/python`` links
    into another virtualenv needs that one too, each hop of the way)."""
    linked = []
    for name in paths:
        linked.append(name)
        if os.path.isdir(name):
            with os.scandir(name) as entries:
                linked += [entry.path for entry in entries if entry.is_symlink()]
    return list(dict.fromkeys([*paths, *(hop for path in linked for hop in link_hops(path))]))


def _mount(*args: str) -> None:
    subprocess.run(["mount", *args], check=True, capture_output=True)


def expose(paths: list[str], holder: Path) -> None:
    """Let any account reach ``paths`` that sit below a folder only root may enter: cover
    that folder with an empty tmpfs and put back only those paths. ``holder`` is a folder
    only root may enter, outside every such folder's reach (the views are made there and
    taken away again). Root, in a private mount namespace; mounts made afterwards (the
    grading sandbox's hidden paths) stay on top."""
    wanted: dict[Path, list[Path]] = {}
    for name in with_link_targets(paths):
        path = Path(name).resolve()
        closed = closed_ancestor(path) if path.exists() else None
        if closed is not None:
            wanted.setdefault(closed, []).append(path)
    views = Path(holder) / ".views"
    views.mkdir(mode=0o700, exist_ok=True)
    views.chmod(0o700)
    bound = []
    for closed, inside in wanted.items():
        for path in inside:
            view = Path(tempfile.mkdtemp(dir=views))
            _mount("--bind", str(path), str(view))
            bound.append((closed, path, view))
    for closed in wanted:
        _mount("-t", "tmpfs", "-o", "mode=755,size=1m", "tmpfs", str(closed))
    for closed, path, view in bound:
        target = closed / path.relative_to(closed)
        target.mkdir(parents=True, exist_ok=True)
        _mount("--bind", str(view), str(target))
    for _closed, _path, view in bound:  # the views would show hidden paths: take them away
        subprocess.run(["umount", "-l", str(view)], check=True, capture_output=True)
        view.rmdir()


def needs_exposing(paths: list[str]) -> bool:
    return any(Path(p).exists() and closed_ancestor(Path(p).resolve())
               for p in with_link_targets(paths))


def command_for(account: pwd.struct_passwd, paths: list[str],
                command: list[str]) -> list[str] | None:
    """The command that runs ``command`` as ``account`` with ``paths`` reachable, or None
    when nothing needs exposing (not root, the account is root, no path is private, or
    no ``unshare``): then start ``command`` as usual."""
    if os.geteuid() != 0 or account.pw_uid == 0 or not needs_exposing(paths):
        return None
    if not shutil.which("unshare") or not shutil.which("mount"):
        return None
    return as_account(account.pw_uid, account.pw_gid, paths, command)


def as_account(uid: int, gid: int, paths: list[str], command: list[str]) -> list[str]:
    """As root: the command that runs ``command`` as ``uid``/``gid`` (no supplementary
    groups; the ids need no account) with ``paths`` reachable, in a mount namespace of
    its own. Needs ``unshare`` and ``mount``."""
    plan = {"paths": paths, "uid": uid, "gid": gid, "command": command}
    return ["unshare", "--mount", "--propagation", "private", "--", sys.executable,
            "-m", "course.host.reach", json.dumps(plan)]


def main(argv: list[str] | None = None) -> None:
    plan = json.loads((sys.argv[1:] if argv is None else argv)[0])
    holder = Path(tempfile.mkdtemp(prefix="reach-", dir="/run" if os.access(
        "/run", os.W_OK) else None))
    try:
        expose(plan["paths"], holder)
    finally:
        shutil.rmtree(holder, ignore_errors=True)
    os.setgroups([])
    os.setgid(plan["gid"])
    os.setuid(plan["uid"])
    command = plan["command"]
    os.execvp(command[0], command)


if __name__ == "__main__":
    main()
