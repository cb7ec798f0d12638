"""``make grade`` and ``make check`` against a bare nbclient run; nbgrader's start-up.

Comparisons, each measured side by side in this run:

- **per submission**: ``make grade`` (``python -m course.term.instructor grade``,
  one worker, sandbox as ``make grade`` chooses it) over N copies of the week 5
  solution, wall time divided by N, against one bare ``nbclient`` run of the same
  notebook (the floor: a fresh kernel running every cell). Target: <= 1.2x.
- **two workers**: the same class graded with ``--workers 2`` against ``--workers 1``
  (a speed-up; target >= 1.7x on 2 cores).
- **make check**: ``python -m course.grader --week 5 --submission DIR`` (a student
  grading their own notebook: a fresh interpreter, a throwaway course, nbgrader's
  generate_assignment + autograde, the report) against the bare run. Target: <= 1.3x.
- **start-up**: one nbgrader command that does nothing (``nbgrader --version``)
  against a bare ``python -c pass``: the fixed cost every nbgrader step pays; and the
  same command with ``rfc3987_syntax`` imported lazily (:mod:`course.base.lazy_rfc3987`,
  what ``make setup``'s start-up hook does) against eagerly (jsonschema's own way), so
  the saving shows whether or not this virtualenv has the hook installed.

Wall-clock ratios move with the machine's load (other jobs share the cores), so the
bare run is sampled between the measured commands, not once before them, and each
command's **CPU seconds** (its own and every child's: kernels, nbgrader, subprocesses)
are reported next to its wall time: the CPU ratio says how much work grading adds to
the notebook's own, whatever else the machine is doing.

N is 30 (``--quick``: 4). Everything runs in a temporary course folder.
``python -m bench --only grading`` runs this benchmark alone.
"""

from __future__ import annotations

import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import nbformat

from bench.common import Comparison, timed
from bench.notebooks import execute

TITLE = ("make grade and make check vs a bare nbclient run, nbgrader start-up, "
         "2-worker speed-up")
ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "solutions" / "week5" / "week5.ipynb"
NBGRADER_VERSION = ("import sys; sys.argv = ['nbgrader', '--version']; "
                    "from nbgrader.apps.nbgraderapp import main; sys.exit(main())")
EAGER = "import rfc3987_syntax.syntax_helpers; " + NBGRADER_VERSION  # builds the parser
LAZY = "from course.base.lazy_rfc3987 import install; install(); " + NBGRADER_VERSION


def _course(students: int) -> Path:
    course = Path(tempfile.mkdtemp(prefix="bench-grading-"))
    shutil.copy2(ROOT / "nbgrader_config.py", course / "nbgrader_config.py")
    for folder in ("solutions", "rubrics"):
        shutil.copytree(ROOT / folder, course / folder)
    for n in range(students):
        target = course / "submitted" / f"s{n:02d}" / "week5"
        target.mkdir(parents=True)
        shutil.copy2(SOURCE, target / "week5.ipynb")
    return course


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}


def _cpu() -> float:
    """CPU seconds (user + system) of this process and of every child it has waited for."""
    own, children = (resource.getrusage(who) for who in (resource.RUSAGE_SELF,
                                                           resource.RUSAGE_CHILDREN))
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def measured(fn: Callable[[], object]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one call of ``fn``."""
    cpu, started = _cpu(), time.perf_counter()
    fn()
    return time.perf_counter() - started, _cpu() - cpu


def _run(command: list[str], cwd: Path | None = None) -> None:
    done = subprocess.run(command, capture_output=True, text=True, env=_env(), cwd=cwd)
    if done.returncode:
        last = (done.stderr or done.stdout).strip().splitlines()
        raise RuntimeError(f"{' '.join(command[:4])}...: {last[-1] if last else 'failed'}")


def _grade(course: Path, workers: int) -> None:
    for folder in ("autograded", "feedback", "grades"):
        shutil.rmtree(course / folder, ignore_errors=True)
    _run([sys.executable, "-m", "course.term.instructor", "grade", "--week", "5",
          "--workers", str(workers), "--repo", str(course)])


def _check(submission: Path) -> None:
    _run([sys.executable, "-m", "course.grader", "--week", "5", "--submission",
          str(submission)], cwd=ROOT)


class Bare:
    """Bare nbclient runs of the notebook, sampled between the measured commands."""

    def __init__(self) -> None:
        self.notebook = nbformat.read(SOURCE, as_version=4)
        self.wall: list[float] = []
        self.cpu: list[float] = []

    def sample(self, times: int = 1) -> None:
        for _ in range(times):
            wall, cpu = measured(lambda: execute(nbformat.from_dict(self.notebook)))
            self.wall.append(wall)
            self.cpu.append(cpu)


def run(quick: bool = False) -> list[Comparison]:
    students = 4 if quick else 30
    course = _course(students)
    bare = Bare()
    try:
        nbgrader = str(Path(sys.executable).parent / "nbgrader")
        startup = timed(lambda: subprocess.run([nbgrader, "--version"], capture_output=True),
                        3 if quick else 5)
        bare_python = timed(lambda: subprocess.run([sys.executable, "-c", "pass"]), 5)
        lazy, eager = [], []
        for _ in range(3 if quick else 5):  # alternately, so load hits both alike
            for code, samples in ((LAZY, lazy), (EAGER, eager)):
                samples.append(measured(lambda c=code: _run([sys.executable, "-c", c]))[0])
        _grade(course, 1)  # registers week 5 in the gradebook once, outside the timings
        bare.sample(1 if quick else 2)
        one = measured(lambda: _grade(course, 1))
        bare.sample(1)
        two = measured(lambda: _grade(course, 2))
        bare.sample(1)
        submission = course / "submitted" / "s00" / "week5"
        check = []
        for _ in range(1 if quick else 2):
            check.append(measured(lambda: _check(submission)))
            bare.sample(1)
    finally:
        shutil.rmtree(course, ignore_errors=True)
    per = [one[0] / students]
    hook = "installed" if _pth_installed() else "NOT installed (run make setup)"
    return [
        Comparison("grading", f"make grade, per submission ({students} submissions, 1 worker)",
                   "bare nbclient run of the notebook", per, bare.wall, target=1.2,
                   target_is_max=True, note=f"bare runs sampled between the commands; "
                   f"CPU per submission {one[1] / students:.2f} s vs "
                   f"{statistics.median(bare.cpu):.2f} s bare"),
        Comparison("grading", "make grade, CPU s per submission (1 worker)",
                   "CPU s of a bare nbclient run", [one[1] / students], bare.cpu,
                   unit="CPU s", note="user + system, the kernels and every subprocess "
                   "included: the work grading adds, whatever the load"),
        Comparison("grading", "1 worker, per submission", "2 workers, per submission",
                   per, [two[0] / students], target=1.7,
                   note=f"ratio = speed-up from the second worker; CPU per submission with "
                   f"2 workers {two[1] / students:.2f} s"),
        Comparison("grading", "make check WEEK=5 (one notebook)",
                   "bare nbclient run of the notebook", [w for w, _ in check], bare.wall,
                   target=1.3, target_is_max=True,
                   note=f"CPU {statistics.median(c for _, c in check):.2f} s vs "
                   f"{statistics.median(bare.cpu):.2f} s bare"),
        Comparison("grading", "nbgrader --version (start-up per command)", "python -c pass",
                   startup, bare_python,
                   note=f"median start-up {statistics.median(startup):.2f} s; the start-up "
                   f"hook (.pth) is {hook} in this virtualenv"),
        Comparison("grading", "nbgrader --version, rfc3987_syntax lazy",
                   "nbgrader --version, rfc3987_syntax eager", lazy, eager,
                   note="the same command with and without course.base.lazy_rfc3987, "
                   "alternately"),
    ]


def _pth_installed() -> bool:
    import sysconfig

    from course.base.lazy_rfc3987 import PTH_NAME

    return (Path(sysconfig.get_paths()["purelib"]) / PTH_NAME).is_file()
