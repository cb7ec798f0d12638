"""The grading sandbox's walls: whether they can be built here, and the bubblewrap
command that starts a graded kernel inside them.

:mod:`course.sandbox.managers` explains the design and starts the kernel; this module
says whether kernels are to be sandboxed (:func:`sandboxed`, :func:`availability`) and
builds the command line (:func:`command`). The sandbox is an **allow-list**, built by
bubblewrap (``bwrap``, the sandbox Flatpak uses; Debian's ``bubblewrap``): the kernel
starts in an empty root file system that holds only what :func:`allowed_paths` lists,
and new user, PID, network, IPC and UTS namespaces of its own. So it sees

- the system, read-only: ``/usr`` (and the ``/bin``, ``/lib``... links or folders
  into it), ``/etc`` and ``/sys``;
- the interpreter and the course's environment (the virtualenv and every folder its
  links lead to) and the ``course`` package folder, read-only: not the repository it
  sits in, so no ``solutions/``, ``rubrics/``, gradebook, ``.git`` or other student's
  submission, and no other folder of the machine (another clone of the course, a home
  folder, the instructor's files);
- a fresh ``/proc`` (its own processes only), a minimal ``/dev``, private ``/tmp`` and
  ``/dev/shm``;
- its scratch folder (its working folder and ``HOME``, writable), and the write end of
  the attempts pipe (:data:`ATTEMPTS_INSIDE`), which the grader reads.

Nothing here runs as root: as root the sandbox first drops to an account of the
kernel's own (:func:`fresh_uid`, :mod:`course.host.reach`), then bubblewrap uses an unprivileged
user namespace, exactly as it does for an instructor who is not root.
"""

from __future__ import annotations

import functools
import os
import secrets
import shutil
import subprocess
import sys
from pathlib import Path

from course.host.reach import with_link_targets

ATTEMPTS_INSIDE = "/run/grading/attempts"
SANDBOX_ROOT = Path("/run/course-grading")  # as root: scratch folders and pipes go here
UIDS = (2_100_000_000, 1 << 24)  # as root: each kernel a fresh uid from this range
SYSTEM_LINKS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
SYSTEM = ("/usr", "/etc", "/sys")  # /sys: what numpy and psutil read about the CPUs
PACKAGE = Path(__file__).resolve().parents[1]  # course/
REPO = PACKAGE.parent  # the repository the package sits in: never inside the walls
INSIDE_ONLY = ("/proc", "/dev", "/run/grading")  # /tmp and /dev/shm: kernel.PRIVATE


def bwrap() -> str | None:
    """The ``bwrap`` program, or None."""
    return shutil.which("bwrap")


def works(user: int | None = None, group: int | None = None) -> str:
    """'' when bubblewrap can build a sandbox here, else one sentence saying why not.

    Args:
        user, group: try it as this uid and gid (root only); default: as the caller.
    """
    program = bwrap()
    if not program:
        return ("bubblewrap is not installed (Debian: apt-get install bubblewrap; `make "
                "grade` installs it when run as root)")
    as_other = {"user": user, "group": group, "extra_groups": []} if user is not None else {}
    done = subprocess.run([program, "--unshare-all", "--unshare-user", "--die-with-parent",
                           "--ro-bind", "/", "/", "true"], capture_output=True, text=True,
                          **as_other)
    if done.returncode:
        return ("bubblewrap cannot create a user namespace here "
                f"({done.stderr.strip()[:160] or done.returncode}); unprivileged user "
                "namespaces are turned off on this machine")
    return ""


def sandboxed(configured: str = "off") -> bool:
    """Whether kernels are to be sandboxed: ``COURSE_GRADING_SANDBOX`` (on, off, auto; 1
    and 0 too), else ``configured``. 'auto' means: wherever :func:`availability` finds
    nothing missing. 'on' where it cannot be is an error when the kernel starts."""
    wanted = os.environ.get("COURSE_GRADING_SANDBOX", "").strip().lower()
    mode = {"1": "on", "0": "off", "": configured}.get(wanted, wanted)
    if mode == "auto":
        return availability() == ""
    return mode == "on"


@functools.lru_cache(maxsize=1)
def availability() -> str:
    """'' when kernels can be sandboxed here, else one sentence saying why not."""
    if os.geteuid() == 0:
        missing = [tool for tool in ("unshare", "mount") if not shutil.which(tool)]
        if missing:
            return f"{' and '.join(missing)} not found (util-linux): no sandbox"
        return works(user=fresh_uid(), group=unprivileged().pw_gid)
    return works()


def fresh_uid() -> int:
    """As root: a uid no account has, for one kernel (from :data:`UIDS`)."""
    return UIDS[0] + secrets.randbelow(UIDS[1])


def unprivileged():
    """The course's unprivileged account (:mod:`course.host.accounts`): as root, the
    account a kernel is inside its walls (a name Postgres can look up), with its group."""
    from course.host.accounts import unprivileged_account

    return unprivileged_account()


def environment_paths() -> list[str]:
    """The interpreter, the virtualenv and the ``course`` package folder. ``PYTHONPATH``
    entries count only where they hold no course repository (a folder that contains the
    package is replaced by the package folder itself)."""
    python_path = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    safe = [p for p in python_path
            if not (Path(p).resolve() / "course").is_dir()
            and not (Path(p).resolve() / "solutions").exists()]
    return list(dict.fromkeys([sys.base_prefix, sys.prefix, str(Path(sys.executable).parent),
                               str(PACKAGE), *safe]))


def allowed_paths() -> list[str]:
    """Every path of the machine a graded kernel may read, besides its scratch folder:
    the system, then the environment with the folders its links lead to (skipping what
    the system folders already hold)."""
    system = (*SYSTEM, *SYSTEM_LINKS)

    def in_system(path: str) -> bool:  # bound or linked already
        return path in system or path.startswith(tuple(s + "/" for s in system))

    own = [p for p in environment_paths() if not in_system(p)]  # an interpreter in /usr
    extra = [p for p in with_link_targets(own) if os.path.lexists(p) and not in_system(p)]
    return [*SYSTEM, *dict.fromkeys(extra)]


def roots_inside(scratch: str) -> list[str]:
    """What exists inside the sandbox: the attempts log counts any access elsewhere."""
    return [*allowed_paths(), *INSIDE_ONLY, scratch,
            *(p for p in SYSTEM_LINKS if os.path.lexists(p))]


def command(kernel: list[str], *, scratch: str, attempts: str,
            uid: int | None = None, gid: int | None = None, tmp_bytes: int = 0) -> list[str]:
    """The bubblewrap command that runs ``kernel`` in the sandbox.

    Args:
        kernel: the kernel's command line (paths as seen inside: they are the same).
        scratch: the kernel's own folder (bound read-write at the same path).
        attempts: the FIFO the grader reads, bound read-only at :data:`ATTEMPTS_INSIDE`
            (a FIFO on a read-only mount can still be opened for writing).
        uid, gid: the ids inside the sandbox (default: the caller's own).
        tmp_bytes: the size of its ``/tmp`` and ``/dev/shm`` (memory file systems; 0:
            bubblewrap's default, half the machine's memory).
    """
    args = [bwrap() or "bwrap", "--unshare-all", "--unshare-user", "--die-with-parent",
            "--hostname", "grading"]
    if uid is not None:
        args += ["--uid", str(uid), "--gid", str(gid if gid is not None else uid)]
    for top in SYSTEM_LINKS:
        if os.path.islink(top):
            args += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            args += ["--ro-bind", top, top]
    size = ["--size", str(tmp_bytes)] if tmp_bytes > 0 else []
    args += ["--proc", "/proc", "--dev", "/dev", "--perms", "1777", *size, "--tmpfs", "/dev/shm",
             "--perms", "1777", *size, "--tmpfs", "/tmp"]
    allowed = allowed_paths()
    folders = tuple(p.rstrip("/") + "/" for p in allowed if not os.path.islink(p))
    for path in allowed:  # after /tmp: an environment may live below it
        if not os.path.islink(path):
            args += ["--ro-bind", path, path]
    for path in allowed:  # a link outside the bound folders (a venv's lib64): the link
        if os.path.islink(path) and not path.startswith(folders):
            args += ["--symlink", os.readlink(path), path]
    args += ["--bind", scratch, scratch, "--ro-bind", attempts, ATTEMPTS_INSIDE,
             "--remount-ro", "/", "--chdir", scratch, "--", *kernel]
    return args
