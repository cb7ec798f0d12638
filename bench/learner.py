"""The learner's ``make test`` (course/grader/learner.py), against what it stands for.

Comparisons, each measured side by side in this run, in a throwaway copy of the course:

- **nothing started** (a fresh clone): ``make test``'s pytest run over every week, against
  ``python -m pytest --version``: the run reads notebooks and declarations and starts no
  kernel (target: at most 3x);
- **week 1 and week 5 started** (their solutions): the same run, against ``make check``
  over the same two weeks (they do the same grading; target: at most 1.1x), and against
  the bare nbclient runs of those two notebooks, summed (target: at most 1.2x).

The runs alternate (:func:`bench.common.interleaved`), so a busy moment hits both sides.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat

from bench.common import Comparison, interleaved
from bench.notebooks import execute
from course.grader.learner import learner_copy

ROOT = Path(__file__).resolve().parent.parent
STARTED = (1, 5)


def _runner(course: Path):
    env = {**os.environ, "PYTHONPATH": str(course), "COURSE_GRADING_SANDBOX": "off",
           "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}  # as make test runs it
    weeks = sorted(p.name for p in course.glob("week[0-9]*") if p.is_dir())

    def learner_test() -> None:  # what `make test` runs; it fails only on a wrong answer
        done = subprocess.run([sys.executable, "-m", "pytest", "-p", "course.grader.learner",
                               "-q", "-p", "no:cacheprovider", *weeks], cwd=course, env=env,
                              capture_output=True, text=True)
        if done.returncode:
            raise RuntimeError(f"make test failed:\n{done.stdout[-2000:]}")

    def pytest_version() -> None:  # as a learner types it: the environment as it is
        subprocess.run([sys.executable, "-m", "pytest", "--version"], cwd=course,
                       capture_output=True, check=True)

    def make_check() -> None:
        for week in STARTED:
            subprocess.run([sys.executable, "-m", "course.grader", "--week", str(week),
                            "--submission", str(course / f"week{week}")], cwd=course,
                           env=env, capture_output=True, check=True)

    def bare() -> None:
        for week in STARTED:
            execute(nbformat.read(ROOT / "solutions" / f"week{week}" / f"week{week}.ipynb",
                                  as_version=4))

    return learner_test, pytest_version, make_check, bare


def run(quick: bool = False) -> list[Comparison]:
    with tempfile.TemporaryDirectory(prefix="bench-learner-") as scratch:
        course = learner_copy(ROOT, Path(scratch))  # releases as committed
        learner_test, pytest_version, make_check, bare = _runner(course)
        fresh, version = interleaved(learner_test, pytest_version, 3 if quick else 5)
        for week in STARTED:
            shutil.copy2(ROOT / "solutions" / f"week{week}" / f"week{week}.ipynb",
                         course / f"week{week}")
        started, checked = interleaved(learner_test, make_check, 1 if quick else 2,
                                       warmup=0)
        _, bare_runs = interleaved(lambda: None, bare, 1 if quick else 2, warmup=0)
    weeks = " and ".join(f"week {w}" for w in STARTED)
    return [
        Comparison("learner", "make test, nothing started (7 weeks)",
                   "python -m pytest --version", fresh, version, target=3.0, target_is_max=True,
                   note="no kernel, no LangGraph: notebooks and declarations read"),
        Comparison("learner", f"make test, {weeks} started", f"make check, {weeks}",
                   started, checked, target=1.1, target_is_max=True,
                   note="the same grading; make test adds pytest's collection"),
        Comparison("learner", f"make test, {weeks} started",
                   f"bare nbclient runs of {weeks}, summed", started, bare_runs, target=1.2,
                   target_is_max=True, note="grading adds nbgrader's assignment, the hidden "
                   "tests and the gradebook to the runs"),
    ]
