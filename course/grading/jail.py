"""The inside of the grading sandbox (:mod:`course.grading.sandbox` explains the design).

``python -m course.grading.jail enter PLAN`` runs as root inside fresh mount and network
namespaces: it hides the paths in the plan behind empty read-only mounts, makes /dev/shm
private, makes every other mount (/tmp included) read-only except the scratch folder,
drops to the plan's account and execs the kernel. ``... kernel PLAN -f FILE`` (what the
kernel command becomes) installs :func:`log_attempts` and starts ipykernel.

This module imports nothing heavy (no nbgrader): it runs once per kernel start. What
lies in a private folder (``/root``, a 0700 temporary folder) is put back for the account
by :func:`course.storage.reach.expose`, an allow-list of the interpreter, the virtualenv
and the ``course`` package.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from course.storage.reach import expose

# /dev/shm gets a private tmpfs. /tmp stays visible (read-only): the interpreter, the
# course package or the course being graded may live there (a fresh clone, CI).
PRIVATE_TMP = ("/dev/shm",)
ATTEMPTS = "attempts.log"


# ---------------------------------------------- inside the namespaces, as root
def _mount(*args: str) -> None:
    subprocess.run(["mount", *args], check=True, capture_output=True)


def _mount_points() -> list[str]:
    points = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        point = line.split()[4].replace("\\040", " ")
        points.append(point)
    return points


def enter(plan: dict) -> None:
    """Build the sandbox (mounts), drop to the account, then exec the kernel."""
    scratch = Path(plan["scratch"])
    uid, gid = plan["uid"], plan["gid"]
    connection = scratch / "kernel.json"
    shutil.copyfile(plan["connection_file"], connection)
    os.chown(connection, uid, gid)
    origin = Path(plan["origin"] or ".")
    for item in origin.iterdir() if origin.is_dir() else []:  # the submission's data files
        if item.is_file() and item.suffix != ".ipynb":
            shutil.copy2(item, scratch / item.name)
            os.chown(scratch / item.name, uid, gid)
    for name in plan.get("seed", []):  # the grader's matplotlib font list (see sandbox.py)
        if os.path.isfile(name):
            shutil.copy2(name, scratch / "tmp" / os.path.basename(name))
            os.chown(scratch / "tmp" / os.path.basename(name), uid, gid)
    blank = scratch.parent / ".blank"  # an empty file only root may read, to cover files
    if not blank.exists():
        blank.touch(mode=0o000)
    hide = [(p, os.path.isdir(p)) for p in plan["hide"] if os.path.lexists(p)]
    _mount("--bind", str(scratch), str(scratch))
    expose(plan.get("expose", []), scratch.parent)  # the interpreter, venv, course package
    for tmp in PRIVATE_TMP:
        if os.path.isdir(tmp) and not str(scratch).startswith(tmp + "/"):
            _mount("-t", "tmpfs", "-o", "mode=1777,size=64m,nosuid,nodev", "tmpfs", tmp)
    keep_writable = {str(scratch), *PRIVATE_TMP, "/proc", "/sys", "/dev"}
    for point in _mount_points():
        if point in keep_writable or point.startswith(("/proc/", "/sys/", "/dev/")):
            continue
        subprocess.run(["mount", "-o", "remount,bind,ro", point], capture_output=True)
    for path, is_dir in hide:
        if is_dir:
            _mount("-t", "tmpfs", "-o", "ro,mode=755,size=4k", "tmpfs", path)
        else:
            _mount("--bind", str(blank), path)
            subprocess.run(["mount", "-o", "remount,bind,ro", path], capture_output=True)
    os.setgroups([])
    os.setgid(gid)
    os.setuid(uid)
    os.chdir(scratch)
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("COURSE_SANDBOX", "JPY_", "JUPYTER_RUNTIME"))}
    env.update(HOME=str(scratch), TMPDIR=str(scratch / "tmp"), USER=plan["user"],
               MPLCONFIGDIR=str(scratch / "tmp"), IPYTHONDIR=str(scratch / ".ipython"),
               JUPYTER_RUNTIME_DIR=str(scratch / "runtime"))
    kernel = [str(connection) if arg == plan["connection_file"] else arg
              for arg in plan["kernel"]]
    if "-m" in kernel and kernel[kernel.index("-m") + 1] == "ipykernel_launcher":
        at = kernel.index("-m")
        kernel[at:at + 2] = ["-m", "course.grading.jail", "kernel",
                             json.dumps({"hide": plan["hide"], "scratch": str(scratch)})]
    os.execve(kernel[0], kernel, env)


# ------------------------------------------------------- inside the kernel, as the account
def log_attempts(hide: list[str], scratch: str, log: Path) -> None:
    """Install an audit hook that appends to ``log`` every attempt to open or list a
    hidden path, and every attempt to write outside ``scratch`` and the private /dev/shm."""
    hidden = tuple(os.path.realpath(p) for p in hide)
    writable = (os.path.realpath(scratch), *PRIVATE_TMP, "/dev/null")
    out = open(log, "a", buffering=1)  # noqa: SIM115 - open for the kernel's lifetime

    def hook(event: str, args: tuple) -> None:
        if event not in ("open", "os.listdir", "os.scandir", "sqlite3.connect"):
            return
        path = args[0] if args else None
        if isinstance(path, os.PathLike):
            path = os.fspath(path)
        if isinstance(path, bytes):
            path = path.decode(errors="replace")
        if not isinstance(path, str) or path.startswith(str(log)):
            return
        full = os.path.realpath(path)
        mode = args[1] if event == "open" and len(args) > 1 else "r"
        mode = "r+" if event == "sqlite3.connect" else mode
        writing = isinstance(mode, str) and any(m in mode for m in "wax+")
        flags = args[2] if event == "open" and len(args) > 2 else 0
        writing = writing or bool(isinstance(flags, int) and flags & (os.O_WRONLY | os.O_RDWR))
        if full.startswith(hidden) or any(full == h for h in hidden):
            out.write(f"tried to {'write' if writing else 'read'} {full}\n")
        elif writing and not full.startswith(writable):
            out.write(f"tried to write {full} (outside its scratch folder)\n")

    sys.addaudithook(hook)


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["enter"]:
        enter(json.loads(args[1]))
    elif args[:1] == ["kernel"]:
        plan = json.loads(args[1])
        log_attempts(plan["hide"], plan["scratch"], Path(plan["scratch"]) / ATTEMPTS)
        sys.argv = [sys.argv[0], *args[2:]]
        from ipykernel import kernelapp

        kernelapp.launch_new_instance()
    else:
        raise SystemExit("usage: python -m course.grading.jail enter PLAN | kernel PLAN -f FILE")


if __name__ == "__main__":
    main()
