"""``make test``: pytest grades the learner's own notebooks, test by test.

A pytest plugin (``python -m pytest -p course.grader.learner week1 week5 ...``; ``make
test`` gives it every week folder, ``make test WEEK=5`` one). For each ``weekN/weekN.ipynb``
it collects, it promises:

- one test item per graded test cell of the week (:mod:`course.grader.declaration`),
  visible and hidden, named after the test: the ``test_*`` function the cell defines
  (``test_resume_does_not_double_charge``), else the cell's grade id
  (``ex2_key_same_in_new_process``); ``-k``, ``-x`` and pytest's other options work;
- a week none of whose exercises is attempted (every answer cell still holds the
  release's ``raise NotImplementedError()`` under ``# YOUR CODE HERE``) is "not started":
  its items are skipped, and no kernel starts;
- otherwise the notebook is graded once, exactly as ``make check`` grades it
  (:func:`course.grader.autograde.check_notebook`: nbgrader, hidden tests included, one
  kernel), and each item passes, or fails with the grader's one-line message (no
  traceback into the course's machinery); the items of an exercise not attempted are
  skipped as "not attempted";
- the run ends with a table, one row per week: points earned of points possible (the
  numbers ``make check`` prints), exercises done, and the written answers to grade
  yourself against ``rubrics/weekN.md``.

It imports nothing heavy until a week is started: a fresh clone's ``make test`` reads
seven notebooks and declarations, and starts no kernel.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from course.grader.cells import BLANK, cells_of
from course.grader.declaration import load
from course.grader.week import DeclarationError, Week

NOTEBOOK = re.compile(r"week(\d+)\.ipynb")


class NotPassed(Exception):
    """A learner's test failed: its message is the grader's, shown as is."""


@dataclass
class WeekRun:
    """One week of the learner's: what was attempted, and (once graded) the report."""

    week: Week
    folder: Path
    attempted: set[int]  # exercise numbers
    report: object | None = None  # course.grader.report.Report
    error: str = ""

    @property
    def started(self) -> bool:
        return bool(self.attempted)


def attempted_exercises(week: Week, notebook: Path) -> set[int]:
    """The exercises any of whose answer cells no longer holds the release's blank."""
    sources = {c.nbgrader.get("grade_id"): c.source for c in cells_of(notebook)}
    return {e.number for e in week.exercises
            if any(g in sources and not BLANK.search(sources[g]) for g in e.answers)}


def item_names(week: Week, notebook: Path) -> dict[str, str]:
    """``{grade id: the item's name}`` for every test cell: the ``test_*`` function the
    cell defines, else its grade id."""
    sources = {c.nbgrader.get("grade_id"): c.source for c in cells_of(notebook)}
    names = {}
    for exercise in week.exercises:
        for grade_id in exercise.tests:
            try:
                defined = [n.name for n in ast.parse(sources.get(grade_id, "")).body
                           if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")]
            except SyntaxError:
                defined = []
            names[grade_id] = defined[0] if len(defined) == 1 else grade_id
    return names


class LearnerNotebook(pytest.File):
    """``weekN/weekN.ipynb``: one :class:`LearnerTest` per graded test cell."""

    def collect(self):
        number = int(NOTEBOOK.fullmatch(self.path.name).group(1))
        try:
            week = load(number, self.config.rootpath)
        except DeclarationError as error:
            raise self.CollectError(str(error)) from None
        run = WeekRun(week, self.path.parent, attempted_exercises(week, self.path))
        self.config.stash.setdefault(RUNS, []).append(run)
        names = item_names(week, self.path)
        for exercise in week.exercises:
            for grade_id in exercise.tests:
                yield LearnerTest.from_parent(self, name=names[grade_id], run=run,
                                              grade_id=grade_id, exercise=exercise.number)


class LearnerTest(pytest.Item):
    """One graded test cell of the learner's notebook."""

    def __init__(self, *, run: WeekRun, grade_id: str, exercise: int, **kwargs) -> None:
        super().__init__(**kwargs)
        self.run, self.grade_id, self.exercise = run, grade_id, exercise

    def runtest(self) -> None:
        run = self.run
        if not run.started:
            pytest.skip(f"week {run.week.number} not started")
        if self.exercise not in run.attempted:
            pytest.skip(f"exercise {self.exercise} not attempted (YOUR CODE HERE)")
        if run.report is None and not run.error:
            _grade(run)
        if run.error:
            raise NotPassed(f"week {run.week.number} could not be graded: {run.error}")
        result = next(t for t in run.report.tests if t.grade_id == self.grade_id)
        if not result.passed:
            raise NotPassed(f"{result.label} [{self.grade_id}]: "
                            f"{result.message or 'failed'} ({result.earned:g}/{result.points:g})")

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, NotPassed):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style)

    def reportinfo(self):
        return self.path, None, f"week{self.run.week.number}::{self.name}"


def _grade(run: WeekRun) -> None:
    from course.grader.autograde import GradingError, check_notebook

    try:
        run.report, _ = check_notebook(run.week.number, run.folder)  # its notes: the
        # failed tests' messages say the same
    except GradingError as error:
        run.error = str(error).splitlines()[0]


RUNS = pytest.StashKey[list]()


def learner_copy(repo: Path, target: Path) -> Path:
    """A learner's copy of the course in ``target`` (files, not a clone): the package, the
    sources, the rubrics, the configuration, and every week's release as committed (a
    working copy's ``weekN/`` may hold someone's answers). Returns ``target``."""
    import shutil

    from course.host.checkout import committed_bytes

    junk = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in ("course", "solutions", "rubrics"):
        shutil.copytree(repo / name, target / name, ignore=junk)
    for name in ("pyproject.toml", "nbgrader_config.py"):
        shutil.copy2(repo / name, target / name)
    for folder in sorted(p for p in repo.glob("week[0-9]*") if p.is_dir()):
        name = f"{folder.name}/{folder.name}.ipynb"
        (target / folder.name).mkdir()
        (target / name).write_bytes(committed_bytes(repo, name) or (repo / name).read_bytes())
    return target


def pytest_configure(config) -> None:
    # nbgrader's own gradebook code and re-added cells warn; harmless. By message only: a
    # category (sqlalchemy.exc.SAWarning) would make pytest import its module at start-up
    for harmless in ("ignore:Object of type <Submitted", "ignore:Cell is missing an id field"):
        config.addinivalue_line("filterwarnings", harmless)


def pytest_collect_file(file_path: Path, parent):
    if NOTEBOOK.fullmatch(file_path.name) and file_path.parent.name == file_path.stem:
        return LearnerNotebook.from_parent(parent, path=file_path)
    return None


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    runs = sorted(config.stash.get(RUNS, []), key=lambda r: r.week.number)
    if not runs:
        return
    write = terminalreporter.write_line
    terminalreporter.section("your weeks")
    for run in runs:
        write(table_row(run))
    write("Points are what `make check WEEK=N` gives (hidden tests included); written answers "
          "are yours to grade against rubrics/weekN.md.")


def table_row(run: WeekRun) -> str:
    """One week's line of the closing table."""
    week = run.week
    head = f"week{week.number}  "
    written = (f", written answers: {week.written_points:g} points to grade yourself against "
               f"rubrics/week{week.number}.md" if week.written else "")
    if not run.started:
        return f"{head}not started     0/{week.total:g}"
    if run.report is None:
        return f"{head}not graded      ?/{week.total:g}  ({run.error or 'deselected'})"
    done = sum(1 for e in week.exercises if all(
        t.passed for t in run.report.tests if t.grade_id in e.tests))
    return (f"{head}{run.report.earned:g}/{run.report.total:g}  exercises passed: {done} of "
            f"{len(week.exercises)}, attempted: {len(run.attempted)}{written}")
