"""``make test``, the learner's: pytest grades the learner's own notebooks, test by test
(course/grader/learner.py), in a throwaway copy of the course whose ``weekN/`` folders are
the learner's.

Untouched, every week is "not started" and the run passes; a solved week passes with
``make check``'s numbers; a wrong answer fails, naming its test; pytest's options work.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from weeks import REPO, release_of, source_of

from course.grader.declaration import declared_weeks, load
from course.grader.known_answers import answers
from course.grader.learner import attempted_exercises, item_names, learner_copy


@pytest.fixture
def learner(tmp_path) -> Path:
    """A learner's copy of the course, every week as released (:func:`learner_copy`)."""
    return learner_copy(REPO, tmp_path)


def run_tests(course: Path, *args: str) -> subprocess.CompletedProcess:
    """What ``make test`` runs there (``args``: the week folders and pytest's options)."""
    path = [str(course), *filter(None, [os.environ.get("PYTHONPATH")])]  # the copy's package
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "course.grader.learner",
                           "-p", "no:cacheprovider", "-rfE", *args], cwd=course,
                          capture_output=True, text=True, timeout=900,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(path),
                               "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})


def solved(course: Path, week: int, **cells: str) -> None:
    """The learner's week ``week``: the solution's answers, with ``cells`` ({grade id: new
    source}) instead of some."""
    nb = nbformat.read(source_of(week), as_version=4)
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in cells:
            cell.source = cells[grade_id]
    nbformat.write(nb, course / f"week{week}" / f"week{week}.ipynb")


def test_a_fresh_clone_passes_with_every_week_not_started(learner):
    done = run_tests(learner, *sorted(f"week{w}" for w in declared_weeks()))
    assert done.returncode == 0, done.stdout[-3000:]
    rows = [line for line in done.stdout.splitlines() if re.match(r"week\d+  ", line)]
    assert rows == [f"week{w}  not started     0/{load(w).total:g}" for w in declared_weeks()]
    assert re.search(r"\b\d+ skipped\b", done.stdout) and " passed" not in done.stdout


def test_tests_are_named_after_the_test_in_the_notebook():
    names = item_names(load(5), release_of(5))
    assert names["ex2_test_resume_does_not_double_charge"] == "test_resume_does_not_double_charge"
    assert names["ex2_key_same_in_new_process"] == "ex2_key_same_in_new_process"


def test_what_counts_as_attempted():
    week = load(5)
    assert attempted_exercises(week, release_of(5)) == set()
    assert attempted_exercises(week, source_of(5)) == {e.number for e in week.exercises}


@pytest.mark.slow
def test_every_week_solved_and_one_wrong_answer_fails_exactly_its_tests(learner):
    """Every week solved, each but week 5 with one known wrong answer (one nbgrader grades in
    the week's own suite, so it is known to fail nothing else): each week fails exactly that
    answer's tests, by name, and scores its total less their points, as ``make check`` does;
    week 5, solved, passes the customer's test and scores 57/57."""
    from week_pipeline import graded_by_nbgrader

    expected: dict[int, tuple[set[str], float]] = {5: (set(), 57)}
    solved(learner, 5)
    for week in [w for w in declared_weeks() if w != 5]:
        declared = load(week)
        wrong = next(iter(graded_by_nbgrader(declared, answers(declared)).values()))
        solved(learner, week, **wrong.cells)
        names = item_names(declared, source_of(week))
        expected[week] = ({f"week{week}/week{week}.ipynb::{names[g]}" for g in wrong.fails},
                          declared.total - sum(declared.cell_points[g] for g in wrong.fails))
    done = run_tests(learner, "-v", *sorted(f"week{w}" for w in declared_weeks()))
    assert done.returncode == 1, done.stdout[-3000:]
    failed = set(re.findall(r"^FAILED (\S+)", done.stdout, re.M))
    assert failed == set().union(*(names for names, _ in expected.values())), done.stdout[-3000:]
    assert "week5/week5.ipynb::test_resume_does_not_double_charge PASSED" in done.stdout
    for week, (_, points) in expected.items():
        assert re.search(rf"^week{week}  {points:g}/{load(week).total:g}  ", done.stdout, re.M), (
            week, done.stdout[-2000:])
    check = subprocess.run([sys.executable, "-m", "course.grader", "--week", "1",
                            "--submission", str(learner / "week1")], cwd=learner,
                           capture_output=True, text=True, timeout=600,
                           env={**os.environ, "PYTHONPATH": os.pathsep.join(
                               [str(learner), *filter(None, [os.environ.get("PYTHONPATH")])])})
    assert check.stdout.strip().splitlines()[-1] == f"week1: {expected[1][1]:g}/19"


@pytest.mark.slow
def test_a_key_from_uuid4_fails_the_customers_test_by_name(learner):
    """``-k`` picks tests by name, as ``make test WEEK=5 K=resume`` does."""
    source = next(c.source for c in nbformat.read(source_of(5), as_version=4).cells
                  if c.metadata.get("nbgrader", {}).get("grade_id") == "ex2_charge")
    key = "    return f\"{state['thread_id']}:charge:{state['invoice_id']}\""
    assert key in source
    solved(learner, 5, ex2_charge="import uuid\n" + source.replace(
        key, "    return f\"{state['thread_id']}:{uuid.uuid4()}\""))
    done = run_tests(learner, "week5", "-k", "resume")
    assert done.returncode == 1, done.stdout[-3000:]
    assert "FAILED week5/week5.ipynb::test_resume_does_not_double_charge" in done.stdout
    assert "1 failed" in done.stdout and "deselected" in done.stdout


@pytest.mark.slow
def test_the_courses_own_suite_passes_where_the_learner_solved_weeks_1_and_5(tmp_path):
    """``make test-all`` never reads the learner's ``weekN/``: in a clone where weeks 1 and 5
    are solved, week 1's whole suite and week 5's quick checks pass (they read the releases
    as committed)."""
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True, timeout=300)
    for week in (1, 5):
        shutil.copy2(source_of(week), clone / f"week{week}" / f"week{week}.ipynb")
    path = [str(clone), *filter(None, [os.environ.get("PYTHONPATH")])]  # the clone's package
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path),
           "COURSE_GRADING_SANDBOX": "off"}  # the sandbox would bind this checkout's package
    for args in (["tests/test_week1.py"], ["tests/test_week5.py", "-m", "not slow"]):
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                               *args], cwd=clone, capture_output=True, text=True, timeout=900,
                              env=env)
        assert done.returncode == 0, done.stdout[-4000:]
        assert "failed" not in done.stdout and " passed" in done.stdout


def test_make_test_names_each_test_with_args_v():
    """The README's ``make test ARGS=-v``: the Makefile then leaves out its ``-q`` (with
    both, pytest's verbosity is back to one dot per test); without it, ``-q`` stays."""
    def command(*args: str) -> str:
        done = subprocess.run(["make", "-n", "--no-print-directory", "test", *args],
                              cwd=REPO, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        lines = done.stdout.replace("\\\n", " ").splitlines()  # a recipe's continued lines
        [line] = [ln for ln in lines if "course.grader.learner" in ln]
        return " ".join(line.split())

    assert " -q " in command()
    verbose = command("ARGS=-v")
    assert " -q " not in verbose and verbose.split(" || ")[0].split()[-1] == "-v"
    assert "ARGS=-v" in (REPO / "README.md").read_text()
