"""Run a student's notebook kernel where it cannot cheat, and within a time budget.

Three pieces, switched on from ``nbgrader_config.py`` (``Autograde`` uses
:class:`GradingExecute` in place of nbgrader's ``Execute``), so ``make grade``,
``make check`` and the hub's formgrader grade alike:

**A whole-notebook time budget.** :class:`GradingExecute` keeps nbgrader's per-cell
limit and adds ``notebook_budget`` seconds for the whole notebook: once it is spent,
every remaining cell gets ``min_cell_s`` (a second by default) before it is stopped
and graded as failed. One student whose helper loops forever costs at most
the budget plus a second per remaining cell, and the cells that need no loop still
score. ``COURSE_NOTEBOOK_BUDGET`` overrides the budget.

**Tests the notebook cannot neuter** (always on). Every kernel starts through
:mod:`course.sandbox.kernel`, which snapshots the hooks a notebook could rewire
(:mod:`course.sandbox.intact`). Before and after every test cell the grader asks the
kernel, through a channel no transformer sees, to put them back and to prove it did
(a secret only the grader and the untouched check know). A test cell that did not
run to its last line, that ran while something rewired the kernel, or whose check gave
no valid proof, is graded as failed, with a message saying why; rewiring is named on
the student's row (``COURSE_GRADING_NOTES``).

**The sandbox: an allow-list** (``GradingExecute.sandbox``: ``auto``, the course's
setting, sandboxes wherever bubblewrap works; ``COURSE_GRADING_SANDBOX=on|off``
overrides it; ``make check`` turns it off, ``make grade`` on when it can).
:class:`SandboxedKernelManager` starts each kernel with bubblewrap in an empty root
that holds only the system, the interpreter, the virtualenv and the ``course`` package
read-only, and the kernel's own scratch folder (:mod:`course.sandbox.jail` lists it),
in new user, PID, network, IPC and UTS namespaces: no other copy of the course, no home
folder, no other kernel's processes or files, no network. As root, each kernel first
becomes an account of its own (a fresh uid, with no supplementary groups; what it needs
below a private folder is exposed by :mod:`course.host.reach`); as any other
account (an instructor, the hub's formgrader) bubblewrap's unprivileged user namespace
does the same job. Every attempt to reach a path outside the walls, or to write
outside the scratch folder, goes down a pipe the grader owns and reads, prefixed with
the student's name, to ``COURSE_GRADING_NOTES``.

The kernel inherits only an allow-listed environment (:data:`KERNEL_ENV`): no ``make``
variable, credential or token of the grader's. Every kernel, sandboxed or not, runs
within :mod:`course.sandbox.limits` (memory, processes, output, disk, CPU time; the
kernel sets them on itself, and :class:`~course.sandbox.limits.KernelWatch` stops it at
what it cannot see). What it cannot stop: a notebook still reads what the walls let in
(the system, the virtualenv, the ``course`` package and its reference implementations);
code that bypasses Python (ctypes, a subprocess) is held by the walls but goes unlogged.
"""

from __future__ import annotations

import ast
import asyncio
import atexit
import contextlib
import functools
import json
import os
import secrets
import shutil
import signal
import stat
import tempfile
import threading
import time
from pathlib import Path
from queue import Empty
from typing import ClassVar

from jupyter_client.manager import AsyncKernelManager
from nbclient.util import ensure_async, run_sync
from nbformat import NotebookNode
from nbgrader.preprocessors import Execute
from traitlets import Enum, Float, Integer

from course.grader.declaration import load
from course.grader.verdict import one_line
from course.grader.week import DeclarationError, Week
from course.sandbox import jail
from course.sandbox.limits import OUTPUT_CUT, KernelWatch, Limits, breach_of

REPO = Path(__file__).resolve().parents[2]
SANDBOX_ROOT = Path("/run/course-grading")
CHECK_TIMEOUT_S = 5
UIDS = (2_100_000_000, 1 << 24)  # as root: each kernel a fresh uid from this range


# ------------------------------------------------------------ tests that cannot be neutered
def is_test(cell: NotebookNode) -> bool:
    """An autograded test cell (nbgrader: graded, no solution)."""
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return cell.cell_type == "code" and meta.get("grade") and not meta.get("solution")


def week_of(resources: dict | None) -> int | None:
    """The week nbgrader is grading (its assignment ``weekN``), if it is one."""
    assignment = str(((resources or {}).get("nbgrader") or {}).get("assignment") or "")
    return int(assignment[4:]) if assignment.startswith("week") and assignment[4:].isdigit() \
        else None


def declared_week(config, resources: dict | None, student: str) -> Week | None:
    """The declaration (:mod:`course.grader.declaration`) of the week being graded, from
    the course folder nbgrader grades in (``CourseDirectory.root``, else the working
    folder); None, with a note on the student's row, when it cannot be read."""
    week = week_of(resources)
    if week is None:
        return None
    root = config.get("CourseDirectory", {}).get("root") if config else None
    try:
        return load(week, Path(root if isinstance(root, str) and root else os.getcwd()),
                    check=False)
    except DeclarationError as error:
        note(f"{student}: answers calling the course's references are not detected: {error}")
        return None


def answer_sources(nb) -> list[str]:
    """The source of every answer cell (nbgrader: a solution) of ``nb``."""
    return [c.source for c in nb.cells if c.cell_type == "code"
            and c.get("metadata", {}).get("nbgrader", {}).get("solution")]


def with_marker(source: str, line: str) -> str | None:
    """``source`` with ``line`` after its last statement, or None where that would change
    what the cell does: its last statement is an expression (its value is the cell's
    result, which nbgrader reads as partial credit), or it is not plain Python."""
    try:
        body = ast.parse(source).body
    except SyntaxError:  # an IPython magic, or a student's syntax error in a test cell
        return None
    if body and isinstance(body[-1], ast.Expr):
        return None
    return f"{source}\n{line}"


def failed_check(cell: NotebookNode, why: str) -> None:
    """Make ``cell`` fail (an error output), unless it already failed."""
    if any(o.get("output_type") == "error" for o in cell.outputs):
        return
    cell.outputs.append(NotebookNode({
        "output_type": "error", "ename": "GradingCheckFailed", "evalue": why,
        "traceback": [f"GradingCheckFailed: {why}"]}))


def note(line: str) -> None:
    """One line for the student's row (``COURSE_GRADING_NOTES``), if grading keeps notes."""
    notes = os.environ.get("COURSE_GRADING_NOTES")
    if notes:
        with open(notes, "a") as out:
            out.write(one_line(line, 1000) + "\n")


def trusted(answer: dict, references: tuple[str, ...] = ()) -> bool:
    """Whether a proved answer of the kernel's check says only what the check can say:
    each finding one of :func:`course.sandbox.intact.is_finding`'s fixed names, each
    delegation one of the references watched, ``ran`` a bool or None. A forged answer
    (made by a notebook that read the secret) is refused, so its words never reach the
    notes."""
    from course.sandbox.intact import is_finding

    rewired, delegated = answer.get("rewired"), answer.get("delegated")
    return (isinstance(rewired, list) and all(isinstance(n, str) and is_finding(n)
                                              for n in rewired)
            and isinstance(delegated, list) and all(isinstance(n, str) and n in references
                                                    for n in delegated)
            and answer.get("ran") in (True, False, None))


class TestGuard:
    """The grader's half of :mod:`course.sandbox.intact`, for one kernel."""

    def __init__(self, executor: Execute, name: str, secret: str, student: str,
                 week: Week | None = None, answers: list[str] | None = None) -> None:
        self.executor, self.name, self.secret, self.student = executor, name, secret, student
        self.week, self.answers = week, answers or []
        self.rewired: dict[str, None] = {}
        self.silent = False  # the kernel stopped answering checks: ask no more
        self.watched: tuple[str, ...] = ()  # the references the check watches meanwhile

    async def ask(self, marker: str | None, nonce: str,
                  watch: tuple[list[str], list[str]] | None = None) -> dict | None:
        """The kernel's check, proved; None when it gave no valid answer."""
        from course.sandbox.intact import proof

        if self.silent:
            return None
        kc, km = self.executor.kc, self.executor.km
        expression = f"__import__('sys').{self.name}({nonce!r}, {marker!r}, {watch!r})"
        msg_id = kc.execute("", silent=True, store_history=False,
                            user_expressions={"check": expression})
        deadline = time.monotonic() + CHECK_TIMEOUT_S
        while time.monotonic() < deadline:
            try:
                msg = await ensure_async(kc.shell_channel.get_msg(timeout=0.5))
            except Empty:
                if not await ensure_async(km.is_alive()):
                    break
                continue
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            found = msg["content"].get("user_expressions", {}).get("check", {})
            try:
                answer = ast.literal_eval(found["data"]["text/plain"])
                if answer["proof"] == proof(self.secret, nonce, answer["rewired"],
                                            answer["ran"], answer["delegated"]) \
                        and trusted(answer, self.watched):
                    return answer
            except (KeyError, TypeError, ValueError, SyntaxError):
                pass
            return None
        self.silent = True
        return None

    async def run(self, cell: NotebookNode, execute) -> NotebookNode:
        """Run test ``cell`` with the kernel's hooks put back before, checked after, and
        its exercise's references watched (:mod:`course.sandbox.references`)."""
        from course.sandbox.references import message

        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id", "")
        exercise = self.week.exercise_of(grade_id) if self.week else None
        refs = exercise.references if exercise else ()
        own = [c.source for c in self.executor.nb.cells
               if c.get("metadata", {}).get("nbgrader", {}).get("grade_id")
               in exercise.answers] if refs else []
        self.watched = ()
        before = await self.ask(None, secrets.token_hex(16),
                                (list(refs), self.answers, own) if refs else None)
        self.watched = tuple(refs)
        if before:
            self.rewired.update(dict.fromkeys(before["rewired"]))
        nonce, marker = secrets.token_hex(16), f"_grading_ran_{secrets.token_hex(6)}"
        source = cell.source
        marked = with_marker(source, f"{marker} = {nonce[:16]!r}")
        cell.source = marked or source
        marker = marker if marked else None
        try:
            result = await execute()
        finally:
            cell.source = source
        after = await self.ask(marker, nonce)
        if after is None:
            failed_check(cell, "the grader could not check that this test ran (the kernel "
                               "did not answer its check, or answered it falsely)")
        elif after["rewired"]:
            failed_check(cell, "something rewired the kernel while this test ran ("
                               + ", ".join(after["rewired"]) + ")")
            self.rewired.update(dict.fromkeys(after["rewired"]))
        elif marker and not after["ran"]:
            failed_check(cell, "this test did not run to its end: something in the "
                               "notebook changed how cells run")
        if after and after["delegated"]:
            failed_check(cell, message(after["delegated"]))
            note(f"{self.student}: exercise {exercise.number} calls the course's "
                 f"reference {', '.join(after['delegated'])}: scored 0")
        return result

    def report(self) -> None:
        if self.rewired:
            note(f"{self.student}: rewired the kernel's " + ", ".join(self.rewired)
                 + " (put back before each test)")


class GradingKernelManager(AsyncKernelManager):
    """Starts ipykernel through :mod:`course.sandbox.kernel` (the test guard, no walls),
    within :attr:`limits` (:mod:`course.sandbox.limits`; the executor sets them)."""

    limits: Limits = Limits()
    student = "?"

    def stop_now(self) -> None:
        """SIGKILL the kernel's process group: the kernel, and what it started."""
        pgid = getattr(getattr(self, "provisioner", None), "pgid", None)
        if pgid:
            with contextlib.suppress(OSError):
                os.killpg(pgid, signal.SIGKILL)

    async def _async_post_start_kernel(self, **kw):
        await super()._async_post_start_kernel(**kw)

        def stop(reason: str) -> None:
            self.stop_now()
            note(f"{self.student}: {reason}")

        self._watch = KernelWatch([Path(p) for p in getattr(self, "_watched", [])],
                                  self.limits, lambda: getattr(
                                      getattr(self, "provisioner", None), "pgid", None), stop)

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

    async def _async_pre_start_kernel(self, **kw):
        cmd, kw = await super()._async_pre_start_kernel(**kw)
        self.student = student_of(kw.get("cwd"))
        plan = self._guard_plan(Path(tempfile.gettempdir()))
        env = kw.get("env") or os.environ
        self._watched = [p for p in (kw.get("cwd"), env.get("TMPDIR")) if p]
        return self._kernel_command(cmd, plan), kw

    async def _async_cleanup_resources(self, restart: bool = False):
        watch = getattr(self, "_watch", None)
        if watch is not None:
            watch.close()
            self._watch = None
        process = getattr(getattr(self, "provisioner", None), "process", None)
        code = process.poll() if process is not None else None
        if code in (-signal.SIGXCPU, 128 + signal.SIGXCPU):
            note(f"{self.student}: used up its {self.limits.says('cpu')}: its kernel was "
                 "stopped")
        await super()._async_cleanup_resources(restart=restart)
        secret_file = getattr(self, "_secret_file", None)
        if secret_file is not None:
            secret_file.unlink(missing_ok=True)  # a kernel that died before reading it


# --------------------------------------------------------------------- the time budget
class GradingExecute(Execute):
    """nbgrader's Execute with a whole-notebook time budget, the test guard and, where
    it can, the sandbox."""

    notebook_budget = Integer(
        0, help="seconds for the whole notebook (0: no budget, only the per-cell limit)",
    ).tag(config=True)
    min_cell_s = Float(1.0, help="time left to each cell once the budget is spent").tag(
        config=True)
    sandbox = Enum(["auto", "on", "off"], "off", help="run each kernel in the sandbox: "
                   "'auto' wherever bubblewrap works; COURSE_GRADING_SANDBOX overrides"
                   ).tag(config=True)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._started = time.monotonic()
        self._cell_error = dict(self.error_on_timeout or {})
        self._output_bytes = 0
        self._cut: set[int] = set()  # cells whose output went past the output limit
        self._limits = Limits()

    def preprocess(self, nb, resources=None, km=None):
        self._started = time.monotonic()
        if km is None:
            self.kernel_manager_class = (SandboxedKernelManager if sandboxed(self.sandbox)
                                         else GradingKernelManager)
        self._guard = None
        self._output_bytes, self._cut = 0, set()
        self._limits = Limits.current(self.budget_s)  # a bad COURSE_LIMIT_*: said here
        # The kernel's temporary files go to a folder of this notebook's own, removed once
        # the kernel is gone: grading shuts kernels down at once (nbgrader_config.py), so
        # the exit handlers that tidy a notebook's scratch folder never run. The sandbox
        # gives its kernels a scratch folder of their own instead.
        with tempfile.TemporaryDirectory(prefix="grading-tmp-",
                                         ignore_cleanup_errors=True) as kernel_tmp:
            self._kernel_tmp = kernel_tmp
            try:
                return super().preprocess(nb, resources, km)
            finally:
                if self._guard is not None:
                    self._guard.report()
                self._report_breaches(nb)

    def _report_breaches(self, nb) -> None:
        """One line per limit the notebook went past, on the student's row."""
        student = getattr(self.km, "student", None) or getattr(self, "_student", "?")
        said: set[str] = set()
        for cell in nb.cells:
            for output in cell.get("outputs", []):
                if output.get("output_type") == "error":
                    breach = breach_of(output.get("ename"), output.get("evalue"),
                                       self._limits)
                    if breach and breach not in said:
                        said.add(breach)
                        note(f"{student}: {breach}")

    def output(self, outs, msg, display_id, cell_index):
        """nbclient's, within the output limit: once the notebook's outputs pass it,
        nothing but errors is kept; the cell that passed it is interrupted and fails
        with :data:`~course.sandbox.limits.OUTPUT_CUT`."""
        limit = self._limits.output
        if not limit or msg.get("msg_type") == "error":
            return super().output(outs, msg, display_id, cell_index)
        content = msg.get("content", {})
        size = len(str(content.get("text", ""))) + sum(
            len(str(v)) for v in (content.get("data") or {}).values())
        if self._output_bytes + size <= limit:
            self._output_bytes += size
            return super().output(outs, msg, display_id, cell_index)
        if not self._cut:  # the cell that went past it: stop it (the flood costs no more)
            self._cut.add(cell_index)
            self._output_bytes = limit + 1
            with contextlib.suppress(Exception):
                asyncio.get_running_loop().create_task(
                    ensure_async(self.km.interrupt_kernel()))
        return None

    async def async_start_new_kernel(self, **kwargs):
        if self.kernel_manager_class is not SandboxedKernelManager and getattr(
                self, "_kernel_tmp", None):
            kwargs.setdefault("env", {**os.environ, "TMPDIR": self._kernel_tmp})
        if self.km is not None:
            self.km.limits = self._limits
        started = await super().async_start_new_kernel(**kwargs)
        self._student = getattr(self.km, "student", "?")
        return started

    start_new_kernel = run_sync(async_start_new_kernel)  # nbclient binds its own otherwise

    async def async_execute_cell(self, cell, cell_index, execution_count=None,
                                 store_history=True):
        km = self.km
        if not is_test(cell) or not hasattr(km, "guard_name"):
            result = await super().async_execute_cell(cell, cell_index, execution_count,
                                                      store_history)
            self._after_cell(cell, cell_index)
            return result
        if self._guard is None:
            self._guard = TestGuard(self, km.guard_name, km.guard_secret,
                                    getattr(km, "student", "?"),
                                    declared_week(self.config, self.resources,
                                                  getattr(km, "student", "?")),
                                    answer_sources(self.nb))
        try:
            return await self._guard.run(cell, functools.partial(
                super().async_execute_cell, cell, cell_index, execution_count,
                store_history))
        finally:
            self._after_cell(cell, cell_index)

    def _after_cell(self, cell, cell_index: int) -> None:
        """The output limit's mark on the cell that went past it; and after a fork that
        the process limit refused, the kernel and everything it started are stopped: a
        fork bomb's children are copies of the kernel that never end, and the rest of
        the notebook cannot run beside them (its tests then score 0, the kernel dead)."""
        self._mark_cut(cell, cell_index)
        forked = any(o.get("output_type") == "error" and (breach_of(
            o.get("ename"), o.get("evalue"), self._limits) or "").startswith("hit the")
            for o in cell.get("outputs", []))
        if forked and self.km is not None:
            self.km.stop_now()

    def _mark_cut(self, cell, cell_index: int) -> None:
        if cell_index in self._cut and not any(
                o.get("ename") == OUTPUT_CUT for o in cell.get("outputs", [])):
            cell.outputs.append(NotebookNode({
                "output_type": "error", "ename": OUTPUT_CUT,
                "evalue": f"this cell printed past the notebook's "
                          f"{self._limits.says('output')}: the rest of its output was cut "
                          "and the cell was stopped",
                "traceback": [f"{OUTPUT_CUT}: printed past the {self._limits.says('output')}"]}))

    execute_cell = run_sync(async_execute_cell)

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




# ------------------------------------------------------------------------ the sandbox
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
        return jail.works(user=fresh_uid(), group=_unprivileged().pw_gid)
    return jail.works()


def fresh_uid() -> int:
    """As root: a uid no account has, for one kernel (from :data:`UIDS`)."""
    return UIDS[0] + secrets.randbelow(UIDS[1])


def student_of(cwd: str | os.PathLike | None) -> str:
    """The student a kernel grades, from its working folder ``.../autograded/<student>/<wk>``."""
    parts = Path(cwd or ".").parts
    return parts[-2] if len(parts) >= 3 and parts[-3] == "autograded" else "?"


def matplotlib_font_lists() -> list[str]:
    """The grader's matplotlib font list cache (``fontlist-v*.json``), if there is one.

    A sandboxed kernel gets a new, empty ``MPLCONFIGDIR``, so its first matplotlib import
    would rebuild the list by scanning every font on the system (a quarter of a second
    here, per student); the manager copies these files in first. They name the system's
    font files, which the kernel can read anyway; matplotlib rebuilds a list that does
    not match its version. Where matplotlib looks (``MPLCONFIGDIR``, else the XDG cache
    folder), without importing it."""
    folder = os.environ.get("MPLCONFIGDIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "matplotlib")
    return sorted(str(p) for p in Path(folder).glob("fontlist-v*.json"))


class AttemptsPipe:
    """A FIFO only the grader reads: the sandboxed kernel holds its write end, a thread
    here keeps the first lines it says (at most ``limit``)."""

    def __init__(self, path: Path, writer_uid: int | None, limit: int = 200) -> None:
        self.path, self.lines, self.limit = path, [], limit
        os.mkfifo(path, 0o600)
        self._read = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        self._hold = os.open(path, os.O_WRONLY)  # no end of file before the kernel opens it
        os.set_blocking(self._read, True)
        # The kernel may open it for writing only: others-write for a uid of its own (as
        # root), owner-write for the caller's own uid (bound read-only, so it cannot chmod).
        os.chmod(path, stat.S_IWOTH | stat.S_IRUSR | stat.S_IWUSR if writer_uid is not None
                 else stat.S_IWUSR)
        self._thread = threading.Thread(target=self._drain, daemon=True,
                                        name=f"attempts {path.name}")
        self._thread.start()

    def _drain(self) -> None:
        with os.fdopen(self._read, "rb") as pipe:
            for raw in pipe:
                line = one_line(raw.decode(errors="replace"))
                if line and len(self.lines) < self.limit and line not in self.lines:
                    self.lines.append(line)

    def close(self) -> list[str]:
        """Stop listening once the kernel is gone; every line it said."""
        os.close(self._hold)
        self._thread.join(timeout=5)
        self.path.unlink(missing_ok=True)
        return list(self.lines)


class SandboxedKernelManager(GradingKernelManager):
    """Starts the kernel inside the sandbox described in the module docstring."""

    made: ClassVar[list[Path]] = []  # scratch folders; any left (a dead kernel) go at exit

    def _place(self) -> Path:
        """Where scratch folders and pipes go: only root and their kernel may enter."""
        if os.geteuid() == 0:
            SANDBOX_ROOT.mkdir(mode=0o711, parents=True, exist_ok=True)
            return SANDBOX_ROOT
        home = Path(tempfile.gettempdir()) / f"course-grading-{os.geteuid()}"
        home.mkdir(mode=0o700, exist_ok=True)
        if home.stat().st_uid != os.geteuid() or home.is_symlink():
            raise RuntimeError(f"{home} belongs to someone else: cannot sandbox kernels")
        return home

    async def _async_pre_start_kernel(self, **kw):
        problem = availability()
        if problem:
            raise RuntimeError(f"the grading sandbox is on, but {problem}")
        root = os.geteuid() == 0
        self.student = student_of(kw.get("cwd"))
        place = self._place()
        scratch = Path(tempfile.mkdtemp(prefix=f"{self.student}-", dir=place))
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
        cmd, kw = await AsyncKernelManager._async_pre_start_kernel(self, **kw)
        # as root: a fresh uid outside; inside, the course's unprivileged account (a name
        # Postgres can look up), with its group
        inside = _unprivileged() if root else None
        uid = fresh_uid() if root else None
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

    async def _async_cleanup_resources(self, restart: bool = False):
        await super()._async_cleanup_resources(restart=restart)
        scratch = getattr(self, "_scratch", None)
        if scratch is None:
            return
        attempts = getattr(self, "_attempts", None)
        for line in attempts.close() if attempts else []:
            note(f"{self.student}: sandbox blocked: {line}")
        _remove_in_background(scratch)


def _unprivileged():
    from course.host.accounts import unprivileged_account

    return unprivileged_account()


# What a graded kernel may inherit from the grader's environment: an allow-list, like the
# file system. Everything else (a `make` variable such as DB_URL=postgresql://user:pass@...,
# an API key, the hub's token, MAKEFLAGS) stays out: a notebook could print it into the
# feedback its student gets back.
KERNEL_ENV = ("PATH", "LANG", "LANGUAGE", "TZ", "PYTHONPATH", "PYTHONNOUSERSITE",
              "PYTHONHASHSEED", "PYTHONDONTWRITEBYTECODE", "PYTHONIOENCODING", "VIRTUAL_ENV",
              "JUPYTER_PATH", "JUPYTER_CONFIG_PATH", "COURSE_PG_USER", "COURSE_PG_BINDIR")


def sandbox_env(env, scratch: Path) -> dict[str, str]:
    """The kernel's environment: only :data:`KERNEL_ENV` (and ``LC_*``) of the grader's,
    with ``HOME`` and temporary folders in ``scratch``."""
    kept = {key: value for key, value in env.items()
            if key in KERNEL_ENV or key.startswith("LC_")}
    return {**kept, "HOME": str(scratch), "TMPDIR": str(scratch / "tmp"),
            "MPLCONFIGDIR": str(scratch / "tmp"), "IPYTHONDIR": str(scratch / ".ipython"),
            "JUPYTER_RUNTIME_DIR": str(scratch / "runtime"), "PWD": str(scratch),
            "PYTHONDONTWRITEBYTECODE": "1"}


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
