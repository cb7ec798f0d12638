"""Run a student's notebook kernel where it cannot cheat, and within a time budget.

Two pieces, both switched on from ``nbgrader_config.py`` (``Autograde`` uses
:class:`GradingExecute` in place of nbgrader's ``Execute``):

**A whole-notebook time budget.** :class:`GradingExecute` keeps nbgrader's per-cell
limit and adds ``notebook_budget`` seconds for the whole notebook: once it is spent,
every remaining cell gets ``min_cell_s`` (a second by default) before it is stopped
and graded as failed. One student whose helper loops forever costs at most
the budget plus a second per remaining cell, and the cells that need no loop still
score. ``COURSE_NOTEBOOK_BUDGET`` overrides the budget. Each kernel's ``TMPDIR`` is a
folder of the notebook's own, removed when the notebook is graded.

**A sandboxed kernel** (``COURSE_GRADING_SANDBOX=1``, set by ``make grade`` when it
runs as root). :class:`SandboxedKernelManager` starts each kernel through
``unshare --mount --net`` and :mod:`course.grading.jail`,
which, still root inside the new namespaces:

- hides what a submission must not see behind empty read-only mounts: the
  repository's ``solutions/``, ``rubrics/``, ``.git/``, ``submitted/``, ``autograded/``,
  ``feedback/``, ``exchange/``, ``grades/`` and ``gradebook.db`` (and a worktree's
  real git directories), plus any path in ``COURSE_SANDBOX_HIDE``; the grading course
  folders live in ``/tmp`` folders only root can enter; ``/dev/shm`` becomes private;
- makes every other mount read-only (``/tmp`` included), except the kernel's own
  scratch folder;
- leaves no network (a new network namespace with no interface up; the kernel talks to
  nbgrader over Unix sockets in its scratch folder);
- drops to the unprivileged account of :func:`course.storage.accounts.unprivileged_account`
  (the one the Postgres server and the student check use), with no supplementary
  groups, ``HOME`` and the working folder set to the scratch folder;
- starts the kernel with an audit hook (:func:`course.grading.jail.log_attempts`)
  that records every attempt to open or list a hidden path, or to write outside
  scratch; the manager copies those lines, prefixed with the student's name,
  to ``COURSE_GRADING_NOTES``.

The ``course`` package stays importable (it is read-only). What it cannot do: it does
not limit memory or CPU (the time budget bounds CPU time per notebook), a student
can still read world-readable files outside the hidden paths (the system, the
virtualenv, the ``course`` package), and the attempt log is written by the kernel
process, so code that bypasses Python's audit hooks (ctypes) is blocked but may go
unlogged. Without root there is no account to drop to: :func:`availability` says so
and grading runs unsandboxed.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import ClassVar

from jupyter_client.manager import AsyncKernelManager
from nbclient.util import run_sync
from nbgrader.preprocessors import Execute
from traitlets import Float, Integer

from course.grading.jail import ATTEMPTS

REPO = Path(__file__).resolve().parents[2]
HIDDEN_IN_REPO = ("solutions", "rubrics", ".git", "submitted", "autograded", "feedback",
                  "exchange", "grades", "gradebook.db")
SANDBOX_ROOT = Path("/run/course-grading")


# --------------------------------------------------------------- the time budget
class GradingExecute(Execute):
    """nbgrader's Execute with a whole-notebook time budget and an optional sandbox."""

    notebook_budget = Integer(
        0, help="seconds for the whole notebook (0: no budget, only the per-cell limit)",
    ).tag(config=True)
    min_cell_s = Float(1.0, help="time left to each cell once the budget is spent").tag(
        config=True)

    def __init__(self, *args, **kwargs):
        if sandbox_requested():
            kwargs.setdefault("kernel_manager_class", SandboxedKernelManager)
        super().__init__(*args, **kwargs)
        self._started = time.monotonic()
        self._cell_error = dict(self.error_on_timeout or {})

    def preprocess(self, nb, resources=None, km=None):
        self._started = time.monotonic()
        # The kernel's temporary files go to a folder of this notebook's own, removed once
        # the kernel is gone: grading shuts kernels down at once (nbgrader_config.py), so
        # the exit handlers that tidy a notebook's scratch folder never run. The sandbox
        # gives its kernels a scratch folder of their own instead.
        with tempfile.TemporaryDirectory(prefix="grading-tmp-",
                                         ignore_cleanup_errors=True) as kernel_tmp:
            self._kernel_tmp = kernel_tmp
            return super().preprocess(nb, resources, km)

    async def async_start_new_kernel(self, **kwargs):
        if not sandbox_requested() and getattr(self, "_kernel_tmp", None):
            kwargs.setdefault("env", {**os.environ, "TMPDIR": self._kernel_tmp})
        return await super().async_start_new_kernel(**kwargs)

    start_new_kernel = run_sync(async_start_new_kernel)  # nbclient binds its own otherwise

    @property
    def budget_s(self) -> int:
        """``COURSE_NOTEBOOK_BUDGET`` if set, else ``notebook_budget``. Read when a cell
        starts, not in ``__init__``: nbgrader applies its configuration to a preprocessor
        again after building it, which put back the configured budget (120 s) over the
        variable's."""
        override = os.environ.get("COURSE_NOTEBOOK_BUDGET")
        return int(override) if override else self.notebook_budget

    def _get_timeout(self, cell):
        per_cell = super()._get_timeout(cell)
        budget = self.budget_s
        if not budget:
            return per_cell
        left = budget - (time.monotonic() - self._started)
        if per_cell is not None and per_cell <= left:
            self.error_on_timeout = self._cell_error
            return per_cell
        self.error_on_timeout = {
            "ename": "CellTimeoutError",
            "evalue": f"the notebook used up its {budget}-second budget, so this "
                      f"cell was stopped after {max(left, self.min_cell_s):.0f} s",
            "traceback": [f"CellTimeoutError: the whole notebook may run for "
                          f"{budget} seconds; it had used them up. Look for a "
                          "loop that never ends in a helper that several cells call."],
        }
        return max(int(left), int(self.min_cell_s), 1)


# ------------------------------------------------------------------ the sandbox
def sandbox_requested() -> bool:
    return os.environ.get("COURSE_GRADING_SANDBOX") == "1"


def availability() -> str:
    """'' when kernels can be sandboxed here, else one sentence saying why not."""
    if os.geteuid() != 0:
        return ("not root: kernels run as you, with nbgrader's own isolation only (a fresh "
                "process per notebook, a throwaway course folder, the time budget); run "
                "`make grade` as root (as CI does) to sandbox each kernel")
    missing = [tool for tool in ("unshare", "mount") if not shutil.which(tool)]
    if missing:
        return f"{' and '.join(missing)} not found (util-linux): kernels cannot be sandboxed"
    done = subprocess.run(["unshare", "--mount", "--net", "true"], capture_output=True,
                          text=True)
    if done.returncode:
        return f"unshare --mount --net failed here ({done.stderr.strip()[:120]})"
    return ""


def hidden_paths(repo: Path = REPO) -> list[str]:
    extra = [p for p in os.environ.get("COURSE_SANDBOX_HIDE", "").split(os.pathsep) if p]
    roots = dict.fromkeys([Path(repo).resolve(), REPO])  # the course graded, and the package's
    paths = [str(root / name) for root in roots for name in HIDDEN_IN_REPO]
    return list(dict.fromkeys(paths + [str(p) for r in roots for p in git_dirs(r)] + extra))


def _remove_scratch() -> None:
    for removal in list(_removals):
        removal.join()
    for scratch in SandboxedKernelManager.made:
        shutil.rmtree(scratch, ignore_errors=True)


_removals: list[threading.Thread] = []


def _remove_in_background(scratch: Path) -> None:
    """Delete a finished kernel's scratch folder (the notebook may leave hundreds of files
    there) while grading goes on; :func:`_remove_scratch` waits for it at exit."""
    _removals[:] = [t for t in _removals if t.is_alive()]
    removal = threading.Thread(target=shutil.rmtree, args=(scratch,),
                               kwargs={"ignore_errors": True}, name=f"rm {scratch.name}")
    removal.start()
    _removals.append(removal)


def needed_paths() -> list[str]:
    """What a kernel must reach: the interpreter, the virtualenv, the ``course`` package
    and PYTHONPATH (:mod:`course.grading.jail` re-exposes them below private folders, and
    wherever their symbolic links lead)."""
    python_path = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    return [sys.base_prefix, sys.prefix, str(Path(sys.executable).parent), str(REPO),
            *python_path]


def matplotlib_font_lists() -> list[str]:
    """The grader's matplotlib font list cache (``fontlist-v*.json``), if there is one.

    A sandboxed kernel gets a new, empty ``MPLCONFIGDIR``, so its first matplotlib import
    would rebuild the list by scanning every font on the system (a quarter of a second
    here, per student); the jail copies these files in first. They name the system's
    font files, which the kernel can read anyway; matplotlib rebuilds a list that does
    not match its version. Where matplotlib looks (``MPLCONFIGDIR``, else the XDG cache
    folder), without importing it."""
    folder = os.environ.get("MPLCONFIGDIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "matplotlib")
    return sorted(str(p) for p in Path(folder).glob("fontlist-v*.json"))


def git_dirs(root: Path) -> list[Path]:
    """Where a worktree's history really lives (``.git`` may be a file naming it)."""
    dot_git = Path(root) / ".git"
    if not dot_git.is_file():
        return []
    line = dot_git.read_text().strip()
    if not line.startswith("gitdir:"):
        return []
    gitdir = (Path(root) / line.removeprefix("gitdir:").strip()).resolve()
    common = gitdir / "commondir"
    found = [gitdir]
    if common.is_file():
        found.append((gitdir / common.read_text().strip()).resolve())
    return found


def student_of(cwd: str | os.PathLike | None) -> str:
    """The student a kernel grades, from its working folder ``.../autograded/<student>/<wk>``."""
    parts = Path(cwd or ".").parts
    return parts[-2] if len(parts) >= 3 and parts[-3] == "autograded" else "?"


class SandboxedKernelManager(AsyncKernelManager):
    """Starts the kernel inside the sandbox described in the module docstring."""

    made: ClassVar[list[Path]] = []  # scratch folders; any left (a dead kernel) go at exit

    async def _async_pre_start_kernel(self, **kw):
        from course.storage.accounts import unprivileged_account

        problem = availability()
        if problem:
            raise RuntimeError(f"COURSE_GRADING_SANDBOX=1 but {problem}")
        account = unprivileged_account()
        SANDBOX_ROOT.mkdir(mode=0o711, parents=True, exist_ok=True)
        self._student = student_of(kw.get("cwd"))
        self._scratch = Path(tempfile.mkdtemp(prefix=f"{self._student}-", dir=SANDBOX_ROOT))
        if not self.made:
            atexit.register(_remove_scratch)
        self.made.append(self._scratch)
        (self._scratch / "tmp").mkdir()
        for path in [self._scratch, self._scratch / "tmp"]:
            os.chown(path, account.pw_uid, account.pw_gid)
            os.chmod(path, 0o700)
        self._account = account
        self._origin = kw.get("cwd")
        self.transport = "ipc"
        self.ip = str(self._scratch / "kernel")
        return await super()._async_pre_start_kernel(**kw)

    def format_kernel_cmd(self, extra_arguments=None):
        cmd = super().format_kernel_cmd(extra_arguments)
        plan = {"scratch": str(self._scratch), "uid": self._account.pw_uid,
                "gid": self._account.pw_gid, "user": self._account.pw_name,
                "hide": hidden_paths(), "origin": self._origin,
                "connection_file": os.path.realpath(self.connection_file), "kernel": cmd,
                "expose": needed_paths(), "seed": matplotlib_font_lists()}
        return ["unshare", "--mount", "--net", "--propagation", "private", "--",
                sys.executable, "-m", "course.grading.jail", "enter", json.dumps(plan)]

    async def _async_cleanup_resources(self, restart: bool = False):
        await super()._async_cleanup_resources(restart=restart)
        scratch = getattr(self, "_scratch", None)
        if scratch is None:
            return
        attempts = scratch / ATTEMPTS
        lines = attempts.read_text(errors="replace").splitlines() if attempts.is_file() else []
        log = os.environ.get("COURSE_GRADING_NOTES")
        if lines and log:
            with open(log, "a") as out:
                out.writelines(f"{self._student}: sandbox blocked: {line}\n"
                               for line in dict.fromkeys(lines))
        _remove_in_background(scratch)
