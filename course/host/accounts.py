"""Who runs a program when we are root: one unprivileged account, chosen one way.

PostgreSQL refuses to run as root, and a student is never root, so both the
throwaway Postgres server and the "install and test as a student" check drop
privileges the same way:

- :func:`unprivileged_account` returns ``COURSE_PG_USER`` if it is set (an error
  names it if no such user exists), else the system user ``crashcourse-pg``
  (created with ``useradd --system`` when missing), else ``nobody``.
- :func:`run_as` gives ``subprocess`` the arguments that start a child as that
  account (its uid, its group, no supplementary groups). As a normal user it
  gives nothing: the child runs as you.

- :func:`fresh_copy_for`, :func:`python_for`, :func:`run_bare` (:func:`start_bare`
  in the background): a copy of the repository that account owns, a Python it
  can run, and a bare environment to run it in; ``make lock`` and
  ``tests/test_as_a_student.py`` resolve the pins this way, so a pin only root's
  pip can see never reaches ``constraints.txt``.

Raises :class:`NoUnprivilegedAccount` (a sentence saying why) when none can be had.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from course.host.checkout import copy_tracked

DEFAULT_ACCOUNT = "crashcourse-pg"


class NoUnprivilegedAccount(RuntimeError):
    """Running as root, and no unprivileged account could be found or created."""


def machine_cache() -> Path:
    """Where the course keeps what it builds once per machine and reuses (the hub's
    environments, a PostgreSQL data template): ``/var/lib/crashcourse`` as root,
    ``$XDG_CACHE_HOME/crashcourse`` (``~/.cache/crashcourse``) otherwise."""
    if os.geteuid() == 0:
        return Path("/var/lib/crashcourse")
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "crashcourse"


def unprivileged_account() -> pwd.struct_passwd:
    """The account a root process hands unprivileged work to (see the module docstring)."""
    wanted = os.environ.get("COURSE_PG_USER")
    if wanted:
        try:
            return pwd.getpwnam(wanted)
        except KeyError:
            raise NoUnprivilegedAccount(f"COURSE_PG_USER={wanted!r} is not a user here") from None
    with contextlib.suppress(KeyError):
        return pwd.getpwnam(DEFAULT_ACCOUNT)
    useradd = shutil.which("useradd") or next(
        (p for p in ("/usr/sbin/useradd", "/sbin/useradd") if os.path.exists(p)), None)
    problem = "useradd not found"
    if useradd:
        done = subprocess.run([useradd, "--system", "--user-group", "--no-create-home",
                               "--home-dir", "/nonexistent", "--shell", "/usr/sbin/nologin",
                               "--comment", "unprivileged runner for the crash course",
                               DEFAULT_ACCOUNT], capture_output=True, text=True)
        problem = done.stderr.strip()
    with contextlib.suppress(KeyError):  # created now, or by a parallel run a moment ago
        return pwd.getpwnam(DEFAULT_ACCOUNT)
    try:
        return pwd.getpwnam("nobody")
    except KeyError:
        raise NoUnprivilegedAccount(
            f"running as root, no unprivileged user: could not create {DEFAULT_ACCOUNT!r} "
            f"({problem}) and there is no 'nobody'; set COURSE_PG_USER to an existing account"
        ) from None


def current_or_unprivileged() -> pwd.struct_passwd:
    """The account work runs as: you, or as root the unprivileged account."""
    return unprivileged_account() if os.geteuid() == 0 else pwd.getpwuid(os.getuid())


def run_as(account: pwd.struct_passwd) -> dict[str, Any]:
    """``subprocess`` keyword arguments that start a child as ``account`` (nothing when
    that is already who we are)."""
    if account.pw_uid == os.geteuid():
        return {}
    return {"user": account.pw_uid, "group": account.pw_gid, "extra_groups": []}


# ------------------------------------------------- doing a student's part as one
def _bare_env(account: pwd.struct_passwd, home: Path,
              env: dict[str, str] | None) -> dict[str, str]:
    (home / "tmp").mkdir(parents=True, exist_ok=True)
    return {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8",
            "USER": account.pw_name, "TMPDIR": str(home / "tmp"), **(env or {})}


def _as_account(account: pwd.struct_passwd, command: list[str],
                reach: list[str] | None) -> tuple[list[str], dict[str, Any]]:
    """``command`` and the ``subprocess`` arguments that run it as ``account``, with the
    paths in ``reach`` reachable even below a private folder (:mod:`course.host.reach`:
    the child then drops privileges itself, in a mount namespace of its own)."""
    from course.host.reach import command_for  # here: `-m course.host.reach` runs it

    wrapped = command_for(account, reach, command) if reach else None
    return (wrapped, {}) if wrapped else (command, run_as(account))


def run_bare(account: pwd.struct_passwd, command: list[str], *, cwd: Path, home: Path,
             env: dict[str, str] | None = None, timeout: float = 600,
             reach: list[str] | None = None) -> subprocess.CompletedProcess:
    """Run ``command`` as ``account`` with a bare environment, as a fresh login would
    have it: ``HOME=home``, a plain PATH, no ``PIP_*``, no virtualenv, no root config.
    ``reach``: paths the account must read even where they lie in a private folder."""
    command, user = _as_account(account, command, reach)
    return subprocess.run(command, cwd=cwd, env=_bare_env(account, home, env),
                          capture_output=True, text=True, timeout=timeout, **user)


def start_bare(account: pwd.struct_passwd, command: list[str], *, cwd: Path, home: Path,
               log: Path, env: dict[str, str] | None = None) -> subprocess.Popen:
    """:func:`run_bare` in the background, its output (both streams) going to ``log`` (a
    file, not a pipe, so a chatty command never stalls on a full pipe)."""
    with open(log, "w") as sink:
        return subprocess.Popen(command, cwd=cwd, env=_bare_env(account, home, env),
                                stdout=sink, stderr=subprocess.STDOUT, text=True,
                                **run_as(account))


def python_for(account: pwd.struct_passwd, home: Path) -> str | None:
    """A Python with this interpreter's major.minor version (and ``venv``) that
    ``account`` can run, or None."""
    wanted = f"{sys.version_info.major}.{sys.version_info.minor}"
    candidates = [sys.executable, getattr(sys, "_base_executable", ""),
                  shutil.which(f"python{wanted}") or "", f"/usr/bin/python{wanted}",
                  "/usr/bin/python3"]
    for candidate in dict.fromkeys(c for c in candidates if c):
        try:
            done = run_bare(account, [candidate, "-c", "import sys, venv; print(sys.version)"],
                            cwd=home, home=home, timeout=60)
        except OSError:
            continue
        if done.returncode == 0 and done.stdout.startswith(wanted + "."):
            return candidate
    return None


def fresh_copy_for(account: pwd.struct_passwd, repo: Path, prefix: str) -> tuple[Path, Path]:
    """A new folder in /tmp, owned by ``account``, holding ``home/`` and ``course/`` (a
    copy of ``repo``'s git-tracked files, as a fresh clone would have them)."""
    base = Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))
    home, clone = base / "home", base / "course"
    (home / "tmp").mkdir(parents=True)
    copy_tracked(repo, clone)
    for path in [base, *base.rglob("*")]:
        os.chown(path, account.pw_uid, account.pw_gid, follow_symlinks=False)
    os.chmod(base, 0o755)
    return home, clone
