"""``make grade`` at class scale: per submission, start-up per command, two workers.

Three comparisons, each measured side by side in this run:

- **per submission**: ``make grade`` (``python -m course.grading.instructor grade``,
  one worker, sandbox as ``make grade`` chooses it) over N copies of the week 5
  solution, wall time divided by N, against one bare ``nbclient`` run of the same
  notebook (the floor: a fresh kernel running every cell). Target: <= 1.2x.
- **start-up**: one nbgrader command that does nothing (``nbgrader --version``)
  against a bare ``python -c pass``: the fixed cost every nbgrader step pays.
- **two workers**: the same class graded with ``--workers 2`` against ``--workers 1``
  (a speed-up; target >= 1.7x on 2 cores).

N is 30 (``--quick``: 4). Everything runs in a temporary course folder.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat

from bench.common import Comparison, timed
from bench.notebooks import execute

TITLE = "make grade: per submission vs bare nbclient, nbgrader start-up, 2-worker speed-up"
ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "solutions" / "week5" / "week5.ipynb"


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


def _grade(course: Path, workers: int) -> float:
    for folder in ("autograded", "feedback", "grades"):
        shutil.rmtree(course / folder, ignore_errors=True)
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "course.grading.instructor", "grade",
                           "--week", "5", "--workers", str(workers), "--repo", str(course)],
                          capture_output=True, text=True, env={**os.environ,
                                                               "PYTHONPATH": str(ROOT)})
    if done.returncode:
        raise RuntimeError(done.stderr.strip().splitlines()[-1] if done.stderr else "failed")
    return time.monotonic() - started


def run(quick: bool = False) -> list[Comparison]:
    students = 4 if quick else 30
    course = _course(students)
    try:
        nbgrader = str(Path(sys.executable).parent / "nbgrader")
        startup = timed(lambda: subprocess.run([nbgrader, "--version"], capture_output=True),
                        3 if quick else 5)
        bare_python = timed(lambda: subprocess.run([sys.executable, "-c", "pass"]), 5)
        _grade(course, 1)  # registers week 5 in the gradebook once, outside the timings
        bare = timed(lambda: execute(nbformat.read(SOURCE, as_version=4)), 1 if quick else 3,
                     warmup=0)
        one = [_grade(course, 1) / students]
        two = [_grade(course, 2) / students]
    finally:
        shutil.rmtree(course, ignore_errors=True)
    return [
        Comparison("grading", f"make grade, per submission ({students} submissions, 1 worker)",
                   "bare nbclient run of the notebook", one, bare, target=1.2,
                   target_is_max=True),
        Comparison("grading", "nbgrader --version (start-up per command)", "python -c pass",
                   startup, bare_python,
                   note=f"median start-up {sorted(startup)[len(startup) // 2]:.2f} s"),
        Comparison("grading", "1 worker, per submission", "2 workers, per submission",
                   one, two, target=1.7, note="ratio = speed-up from the second worker"),
    ]
