"""nbgrader's own ``generate_assignment`` + ``autograde``, in a throwaway course folder.

What ``make check``, ``make test`` and ``make grade`` grade with. It promises:

- Grading is nbgrader's own: ``generate_assignment`` from ``solutions/weekN``
  (which records every test cell, hidden ones included, in a gradebook), then
  ``autograde`` of the submission, which puts back the hidden tests and any
  test cell the student deleted, runs the notebook in a fresh kernel, and
  scores each test cell (read back by :mod:`course.grader.scoring`). The
  configuration is the repository's ``nbgrader_config.py``.
- It all happens in a throwaway course folder in a temporary directory: the
  repository never gets a ``gradebook.db``, ``submitted/`` or ``autograded/``.
  The submission folder is only read; a copy is put right
  (:mod:`course.grader.conform`) and flagged (:mod:`course.grader.flags`) first.
- Bad input (no such week, a missing folder, a folder without the notebook, a
  notebook file that is not valid) raises :class:`GradingError` with a one-line
  explanation (:class:`UnreadableNotebook` for the last); nothing is graded. A
  notebook whose kernel dies while it is graded is reported as such and scores 0;
  a notebook that loops forever has the stuck cells named and still gets the
  points of every other test.

:func:`grade` grades several submissions in one nbgrader run (one kernel per
notebook); the tests use it to check the solution, the blank release and known
wrong answers together. :func:`check_notebook` grades one learner's folder as
``make check`` (:mod:`course.grader.cli`) and ``make test`` do.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

import nbformat

from course.grader import speedups
from course.grader.declaration import load
from course.grader.report import Report
from course.grader.scoring import gradebook_scores, read_report
from course.grader.speedups import throwaway_gradebook
from course.grader.week import ANSWERS, DeclarationError

REPO = Path(__file__).resolve().parents[2]


class GradingError(Exception):
    """The request cannot be graded (bad week or folder) or nbgrader itself failed."""


class UnreadableNotebook(GradingError):
    """A submitted notebook that is not valid notebook JSON. Its message speaks to the
    learner (``make check``); ``path`` and ``detail`` let the instructor's tools say it
    their way."""

    def __init__(self, message: str, path: Path, detail: str):
        super().__init__(message)
        self.path, self.detail = path, detail


def grade(week: int, submissions: Mapping[str, str | Path], *, timeout_s: int | None = None,
          repo: Path = REPO, keep: Path | None = None) -> dict[str, Report]:
    """Grade each ``{student: folder}`` against ``solutions/week<week>`` in one nbgrader run."""
    notebooks = check_request(week, submissions.values(), repo=repo)
    for student in submissions:
        if not re.fullmatch(r"[A-Za-z0-9_-]+", student):
            raise GradingError(f"student ids are letters, digits, - and _: {student!r}")

    if keep is not None and Path(keep).exists() and any(Path(keep).iterdir()):
        raise GradingError(f"--keep needs a new or empty folder; {keep} is not empty")
    with tempfile.TemporaryDirectory(prefix=f"grade-week{week}-") as tmp:
        course = Path(keep) if keep else Path(tmp)
        course.mkdir(parents=True, exist_ok=True)
        with throwaway_gradebook(course):
            return _grade_in(course, week, submissions, notebooks, repo, timeout_s)


def _grade_in(course: Path, week: int, submissions: Mapping[str, str | Path],
              notebooks: list[str], repo: Path, timeout_s: int | None) -> dict[str, Report]:
    """:func:`grade`, in the throwaway course folder ``course``."""
    source = repo / "solutions" / f"week{week}"
    assignment = f"week{week}"
    try:
        declared = load(week, repo)
    except DeclarationError as error:
        raise GradingError(str(error)) from None
    shutil.copytree(source, course / "solutions" / assignment,
                    ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__", ANSWERS))
    conformed: dict[str, list[str]] = {}
    flagged: dict[str, list[str]] = {}
    for student, folder in submissions.items():
        target = course / "submitted" / student / assignment
        target.mkdir(parents=True)
        for name in notebooks:
            if (Path(folder) / name).is_file():
                put_right, found = _conformed_copy(Path(folder) / name, target / name,
                                                   source / name)
                conformed.setdefault(student, []).extend(put_right)
                flagged.setdefault(student, []).extend(found)
    config = _config(repo, course, timeout_s)
    _run_nbgrader("generate_assignment", config, assignment)
    failure = _run_nbgrader("autograde", config, assignment, raise_on_failure=False)
    limit = config.ExecutePreprocessor.timeout
    scores = gradebook_scores(config.CourseDirectory.db_url, assignment)
    reports = {student: read_report(course, declared, student, Path(folder), notebooks, limit,
                                scores.get(student, {}))
               for student, folder in submissions.items()}
    for student, report in reports.items():
        report.conformed = conformed.get(student, [])
        report.flags = flagged.get(student, [])
    for student, report in reports.items():  # submitted, yet nbgrader produced nothing
        lost = [n for n in report.missing if (Path(submissions[student]) / n).is_file()]
        report.missing = [n for n in report.missing if n not in lost]
        report.kernel_died = bool(lost)
        for test in report.tests if lost else []:
            test.message = "not run: the notebook's kernel died (see KERNEL DIED above)"
    explained = _kernel_died(failure) and any(r.kernel_died for r in reports.values())
    if failure and not explained:
        raise GradingError(f"nbgrader autograde failed:\n{failure}")
    return reports


def _conformed_copy(submitted: Path, target: Path, source: Path,
                    ) -> tuple[list[str], list[str]]:
    """Copy ``submitted`` to ``target`` with its graded cells made to match the release
    (:func:`course.grader.conform.conform`). Returns what was put right and what the
    static flagger (:func:`course.grader.flags.notebook_flags`) holds for a person, one
    line each: both read here, outside any kernel, before anything runs."""
    from course.grader.conform import conform
    from course.grader.flags import notebook_flags
    from course.grader.verdict import one_line

    nb = nbformat.read(submitted, as_version=4)
    original = nbformat.read(source, as_version=4)
    said = conform(nb, original)
    found = [one_line(line) for line in notebook_flags(nb, original)]
    if not said:
        shutil.copy2(submitted, target)
        return [], found
    nbformat.write(nb, target)
    shutil.copystat(submitted, target)
    return said, found


def check_request(week: int, folders, *, repo: Path = REPO) -> list[str]:
    """The notebook names week ``week`` grades; :class:`GradingError` if the week or a
    folder cannot be graded."""
    source = repo / "solutions" / f"week{week}"
    notebooks = sorted(p.name for p in source.glob("*.ipynb")) if source.is_dir() else []
    if not notebooks:
        weeks = sorted(p.parent.name for p in (repo / "solutions").glob("week*/*.ipynb"))
        raise GradingError(f"there is no week {week}: solutions/week{week} has no notebook "
                           f"(weeks with notebooks: {', '.join(dict.fromkeys(weeks)) or 'none'})")
    for folder in folders:
        _check_folder(Path(folder), notebooks, week)
    return notebooks


def release(week: int, *, repo: Path = REPO) -> Path:
    """Regenerate ``week<week>/`` from ``solutions/week<week>/`` (``nbgrader
    generate_assignment --force``; what ``make release`` runs). It overwrites
    ``week<week>/``. The gradebook nbgrader needs for it lives in a temporary
    folder, so no ``gradebook.db`` is left in the repository."""
    if not any((repo / "solutions" / f"week{week}").glob("*.ipynb")):
        raise GradingError(f"solutions/week{week} has no notebook to release")
    with tempfile.TemporaryDirectory(prefix="release-") as tmp, throwaway_gradebook(tmp):
        config = _config(repo, repo, None, db=Path(tmp) / "gradebook.db")
        _run_nbgrader("generate_assignment", config, f"week{week}")
    return repo / f"week{week}"


def _config(repo: Path, course: Path, timeout_s: int | None, db: Path | None = None):
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(repo)).load_config()
    config.CourseDirectory.root = str(course)
    config.CourseDirectory.db_url = f"sqlite:///{db or course / 'gradebook.db'}"
    if timeout_s is not None:
        old = config.ExecutePreprocessor.timeout
        config.ExecutePreprocessor.timeout = int(timeout_s)
        if "error_on_timeout" in config.Execute:
            config.Execute.error_on_timeout = json.loads(json.dumps(
                config.Execute.error_on_timeout).replace(f"{old} seconds", f"{timeout_s} seconds"))
    return config


def _kernel_died(log: str) -> bool:
    return "DeadKernelError" in log or "UnresponsiveKernelError" in log


def _run_nbgrader(command: str, config, assignment: str, *, raise_on_failure: bool = True,
                  ) -> str:
    """Run one nbgrader converter in this process; the failure log, or "" on success."""
    # nbgrader runs `alembic` as a program when it creates a gradebook: it must be on PATH.
    bin_dir = str(Path(sys.executable).parent)
    if bin_dir not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = bin_dir + os.pathsep + os.environ.get("PATH", "")
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.utils import capture_log

    speedups.install()
    if command == "generate_assignment":
        from nbgrader.converters import GenerateAssignment as Converter
    else:
        from nbgrader.converters import Autograde as Converter
    coursedir = CourseDirectory(config=config)
    coursedir.assignment_id = assignment
    app = Converter(coursedir=coursedir, config=config)
    speedups.lighten(app)
    app.force = True
    app.log.setLevel(logging.WARNING)
    result = capture_log(app)
    if result["success"]:
        return ""
    log = f"{result.get('log', '').strip()}\n{result.get('error', '')}"
    if raise_on_failure:
        raise GradingError(f"nbgrader {command} failed:\n{log}")
    return log


def _check_folder(folder: Path, notebooks: list[str], week: int) -> None:
    if not folder.exists():
        raise GradingError(f"the submission folder {folder} does not exist")
    if not folder.is_dir():
        raise GradingError(f"{folder} is a file; give the folder that holds {notebooks[0]}")
    if not any((folder / name).is_file() for name in notebooks):
        found = sorted(p.name for p in folder.glob("*.ipynb"))
        has = ", ".join(found) or "no notebooks"
        raise GradingError(f"{folder} has no {' or '.join(notebooks)} (it has: {has}); "
                           f"week {week} grades a notebook with exactly that name")
    for name in notebooks:
        if (folder / name).is_file():
            try:
                nbformat.read(folder / name, as_version=4)
            except Exception as error:  # JSON or schema errors: say which file, grade nothing
                detail = f"{type(error).__name__}: {str(error).splitlines()[0][:120]}"
                raise UnreadableNotebook(
                    f"{folder / name} is not a readable notebook ({detail}); restore it from "
                    "a checkpoint (File > Revert Notebook to Checkpoint) or from git",
                    folder / name, detail) from None


def weeks_with_notebooks(repo: Path = REPO) -> list[int]:
    """Every week whose source notebook exists in ``solutions/``, in order."""
    return sorted(int(p.name[4:]) for p in (repo / "solutions").glob("week*")
                  if p.name[4:].isdigit() and any(p.glob("*.ipynb")))


def check_notebook(week: int, folder: Path, *, timeout_s: int | None = None,
                   keep: Path | None = None) -> tuple[Report, list[str]]:
    """Grade one learner's folder as ``make check`` does (nbgrader, hidden tests included,
    the test guard without the sandbox's walls unless ``COURSE_GRADING_SANDBOX`` says so).

    Returns:
        The report, and what the test guard noticed (one line each, said once).

    Raises:
        GradingError: a bad week or folder, or nbgrader itself failed (its output, kept
            out of the way meanwhile, is in the message's last lines).
    """
    check_request(week, [folder])
    os.environ.setdefault("COURSE_GRADING_SANDBOX", "off")
    with _stderr_to_file() as noise, tempfile.NamedTemporaryFile(
            "r", prefix="grading-notes-", suffix=".log") as notes:
        os.environ["COURSE_GRADING_NOTES"] = notes.name  # what the test guard noticed
        try:
            reports = grade(week, {"student": folder}, timeout_s=timeout_s, keep=keep)
        except GradingError as error:
            if "nbgrader" in str(error):
                raise GradingError(f"{error}\n{noise.read_text()[-4000:]}") from None
            raise
        finally:
            os.environ.pop("COURSE_GRADING_NOTES", None)
        noticed = list(dict.fromkeys(line.removeprefix("student: ").strip()
                                     for line in notes.read().splitlines() if line.strip()))
    return reports["student"], noticed


@contextlib.contextmanager
def _stderr_to_file():
    """Keep the kernel's and nbgrader's chatter (warnings about TCP, SQLAlchemy, checksums)
    out of the student's report; it is shown only when grading itself fails."""
    sys.stderr.flush()
    with tempfile.NamedTemporaryFile("w+", prefix="grading-", suffix=".log") as log:
        saved = os.dup(2)
        os.dup2(log.fileno(), 2)
        try:
            yield Path(log.name)
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
