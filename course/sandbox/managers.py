"""The two kernel managers a graded notebook's kernel starts with.

:class:`GradingKernelManager` (``make check``; wherever the sandbox is off) starts
ipykernel through :mod:`course.sandbox.kernel`: the test guard's half in the kernel
(:mod:`course.sandbox.intact`, its secret handed over in a file), within
:mod:`course.sandbox.limits` (memory, processes, output, disk, CPU time; the kernel sets
them on itself, and :class:`~course.sandbox.limits.KernelWatch` stops it at what it
cannot see). No walls.

:class:`SandboxedKernelManager` (``make grade``, the hub's formgrader, wherever
:func:`course.sandbox.jail.sandboxed` says so) does the same inside an allow-list: it
starts each kernel with bubblewrap (:mod:`course.sandbox.jail`) in an empty root that
holds only the system, the interpreter, the virtualenv and the ``course`` package
read-only, and the kernel's own scratch folder, in new user, PID, network, IPC and UTS
namespaces: no other copy of the course, no home folder, no other kernel's processes or
files, no network. As root, each kernel first becomes an account of its own (a fresh
uid, with no supplementary groups; what it needs below a private folder is exposed by
:mod:`course.host.reach`); as any other account (an instructor, the hub's formgrader)
bubblewrap's unprivileged user namespace does the same job. The kernel inherits only an
allow-listed environment (:mod:`course.sandbox.environment`). Every attempt to reach a
path outside the walls, or to write outside the scratch folder, goes down a pipe the
grader owns and reads (:mod:`course.sandbox.attempts`), prefixed with the student's
name, to ``COURSE_GRADING_NOTES``.

What it cannot stop: a notebook still reads what the walls let in (the system, the
virtualenv, the ``course`` package and its reference implementations); code that
bypasses Python (ctypes, a subprocess) is held by the walls but goes unlogged.

Both managers hook into jupyter_client's launch through
:class:`course.sandbox.jupyter_client_kernel_launch.LaunchHooks`, which holds every
override of its private methods.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import secrets
import shutil
import signal
import tempfile
import threading
from pathlib import Path
from typing import Any, ClassVar

from course.sandbox import jail
from course.sandbox.attempts import AttemptsPipe
from course.sandbox.environment import matplotlib_font_lists, sandbox_env
from course.sandbox.jupyter_client_kernel_launch import LaunchHooks, kernel_pgid, kernel_process
from course.sandbox.limits import KernelWatch, Limits
from course.sandbox.notes import note, student_of


class GradingKernelManager(LaunchHooks):
    """Starts ipykernel through :mod:`course.sandbox.kernel` (the test guard, no walls),
    within :attr:`limits` (:mod:`course.sandbox.limits`; the executor sets them)."""

    limits: Limits = Limits()
    student = "?"

    def stop_now(self) -> None:
        """SIGKILL the kernel's process group: the kernel, and what it started."""
        pgid = kernel_pgid(self)
        if pgid:
            with contextlib.suppress(OSError):
                os.killpg(pgid, signal.SIGKILL)

    def kernel_started(self) -> None:
        def stop(reason: str) -> None:
            self.stop_now()
            note(f"{self.student}: {reason}")

        self._watch = KernelWatch([Path(p) for p in getattr(self, "_watched", [])],
                                  self.limits, lambda: kernel_pgid(self), stop)

    def _guard_plan(self, folder: Path) -> dict:
        self.guard_name = f"_grading_check_{secrets.token_hex(8)}"
        self.guard_secret = secrets.token_hex(32)
        secret_file = folder / f".grading-{secrets.token_hex(8)}"
        fd = os.open(secret_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write(self.guard_secret)
        self._secret_file = secret_file
        return {"guard": self.guard_name, "secret_file": str(secret_file),
                "limits": self.limits.plan()}

    def _kernel_command(self, cmd: list[str], plan: dict) -> list[str]:
        if "-m" in cmd and cmd[cmd.index("-m") + 1] == "ipykernel_launcher":
            at = cmd.index("-m")
            return [*cmd[:at], "-m", "course.sandbox.kernel", json.dumps(plan),
                    *cmd[at + 2:]]
        raise RuntimeError(f"a graded kernel must be ipykernel, not {cmd[:3]}")

    async def launch_command(self, cmd: list[str], kw: dict[str, Any]
                             ) -> tuple[list[str], dict[str, Any]]:
        self.student = student_of(kw.get("cwd"))
        plan = self._guard_plan(Path(tempfile.gettempdir()))
        env = kw.get("env") or os.environ
        self._watched = [p for p in (kw.get("cwd"), env.get("TMPDIR")) if p]
        return self._kernel_command(cmd, plan), kw

    def before_cleanup(self) -> None:
        watch = getattr(self, "_watch", None)
        if watch is not None:
            watch.close()
            self._watch = None
        process = kernel_process(self)
        code = process.poll() if process is not None else None
        if code in (-signal.SIGXCPU, 128 + signal.SIGXCPU):
            note(f"{self.student}: used up its {self.limits.says('cpu')}: its kernel was "
                 "stopped")

    def after_cleanup(self) -> None:
        secret_file = getattr(self, "_secret_file", None)
        if secret_file is not None:
            secret_file.unlink(missing_ok=True)  # a kernel that died before reading it


class SandboxedKernelManager(GradingKernelManager):
    """Starts the kernel inside the sandbox described in the module docstring."""

    made: ClassVar[list[Path]] = []  # scratch folders; any left (a dead kernel) go at exit

    def _place(self) -> Path:
        """Where scratch folders and pipes go: only root and their kernel may enter."""
        if os.geteuid() == 0:
            jail.SANDBOX_ROOT.mkdir(mode=0o711, parents=True, exist_ok=True)
            return jail.SANDBOX_ROOT
        home = Path(tempfile.gettempdir()) / f"course-grading-{os.geteuid()}"
        home.mkdir(mode=0o700, exist_ok=True)
        if home.stat().st_uid != os.geteuid() or home.is_symlink():
            raise RuntimeError(f"{home} belongs to someone else: cannot sandbox kernels")
        return home

    async def prepare_launch(self, kw: dict[str, Any]) -> None:
        problem = jail.availability()
        if problem:
            raise RuntimeError(f"the grading sandbox is on, but {problem}")
        self.student = student_of(kw.get("cwd"))
        self._place_now = self._place()
        scratch = Path(tempfile.mkdtemp(prefix=f"{self.student}-", dir=self._place_now))
        self._scratch = scratch
        if not self.made:
            atexit.register(_remove_scratch)
        self.made.append(scratch)
        (scratch / "tmp").mkdir()
        self.transport = "ipc"
        self.ip = str(scratch / "kernel")
        # An interrupt (a cell's time limit) goes as a message, which the kernel turns into
        # SIGINT to itself: a signal to the process group would reach bubblewrap first,
        # and bubblewrap ending takes the sandbox with it.
        self.kernel_spec.interrupt_mode = "message"

    async def launch_command(self, cmd: list[str], kw: dict[str, Any]
                             ) -> tuple[list[str], dict[str, Any]]:
        root = os.geteuid() == 0
        scratch, place = self._scratch, self._place_now
        # as root: a fresh uid outside; inside, the course's unprivileged account (a name
        # Postgres can look up), with its group
        inside = jail.unprivileged() if root else None
        uid = jail.fresh_uid() if root else None
        gid = inside.pw_gid if inside else None
        self._seed(scratch, Path(kw.get("cwd") or "."))
        plan = self._guard_plan(scratch)
        self._attempts = AttemptsPipe(place / f"{scratch.name}.attempts", uid)
        plan.update(attempts=jail.ATTEMPTS_INSIDE, roots=jail.roots_inside(str(scratch)),
                    writable=[str(scratch), "/tmp", "/dev/shm"])
        connection = scratch / "kernel.json"
        shutil.copyfile(self.connection_file, connection)
        cmd = [str(connection) if arg == self.connection_file else arg
               for arg in self._kernel_command(cmd, plan)]
        if root:
            for path in scratch.rglob("*"):
                os.lchown(path, uid, gid)
            os.chown(scratch, uid, gid)
            os.chmod(scratch, 0o700)
        walled = jail.command(cmd, scratch=str(scratch), attempts=str(self._attempts.path),
                              uid=inside.pw_uid if inside else None, gid=gid,
                              tmp_bytes=self.limits.disk)
        if root:
            from course.host.reach import as_account

            walled = as_account(uid, gid, jail.environment_paths(), walled)
        kw["env"] = sandbox_env(kw.get("env") or os.environ, scratch)
        kw.pop("cwd", None)
        self._watched = [scratch]
        return walled, kw

    @staticmethod
    def _seed(scratch: Path, origin: Path) -> None:
        """The submission's data files and the grader's matplotlib font lists."""
        for item in origin.iterdir() if origin.is_dir() else []:
            if item.is_file() and item.suffix != ".ipynb":
                shutil.copy2(item, scratch / item.name)
        for name in matplotlib_font_lists():
            shutil.copy2(name, scratch / "tmp" / os.path.basename(name))

    def after_cleanup(self) -> None:
        super().after_cleanup()
        scratch = getattr(self, "_scratch", None)
        if scratch is None:
            return
        attempts = getattr(self, "_attempts", None)
        for line in attempts.close() if attempts else []:
            note(f"{self.student}: sandbox blocked: {line}")
        _remove_in_background(scratch)


_removals: list[threading.Thread] = []


def _remove_scratch() -> None:
    for removal in list(_removals):
        removal.join()
    for scratch in SandboxedKernelManager.made:
        shutil.rmtree(scratch, ignore_errors=True)


def _remove_in_background(scratch: Path) -> None:
    """Delete a finished kernel's scratch folder (the notebook may leave hundreds of files
    there) while grading goes on; :func:`_remove_scratch` waits for it at exit."""
    _removals[:] = [t for t in _removals if t.is_alive()]
    removal = threading.Thread(target=shutil.rmtree, args=(scratch,),
                               kwargs={"ignore_errors": True}, name=f"rm {scratch.name}")
    removal.start()
    _removals.append(removal)
