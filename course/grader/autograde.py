"""``python -m course.grader [--week 5 [--submission DIR]]``: grade like the instructor.

What ``make check [WEEK=N [SUBMISSION=DIR]]`` runs. It promises:

- Grading is nbgrader's own: ``generate_assignment`` from ``solutions/weekN``
  (which records every test cell, hidden ones included, in a gradebook), then
  ``autograde`` of the submission, which puts back the hidden tests and any
  test cell the student deleted, runs the notebook in a fresh kernel, and
  scores each test cell. Every score is read back from nbgrader's gradebook,
  so nbgrader's rules hold as they are: an error or anything written to stderr
  scores 0, a number as the cell's result is partial credit. The configuration
  is the repository's ``nbgrader_config.py``.
- It all happens in a throwaway course folder in a temporary directory: the
  repository never gets a ``gradebook.db``, ``submitted/`` or ``autograded/``.
  The submission folder is only read.
- The report lists every test cell, one row each, named by what it is ("visible
  test of Exercise 2 — ...", "hidden test of ..."), with the points it earned out of
  its own points (never the exercise's total next to them), and, for each failed
  one, what the test said. Cells stopped by the time limit
  (``ExecutePreprocessor.timeout``) are named as such; grading goes on.
- The last line is exactly ``weekN: <earned>/<total>``, where ``<total>`` counts
  the autograded tests. Written answers (manually graded cells) are counted with
  their points and left out of the total; the report says who grades them (your
  instructor, or you against ``rubrics/weekN.md``).
- It announces no duration it cannot keep: it says what the time depends on and, at
  the end, how long grading took.
- Without ``--week`` it grades every week that has a source notebook, each from
  its ``weekN/`` folder, and ends with a ``summary``: one ``weekN: x/y`` line per
  week and a last line ``total: x/y``.
- Bad input (no such week, a missing folder, a folder without the notebook, a
  notebook file that is not valid) gets a one-line explanation and exit status
  2; nothing is graded. A notebook whose kernel dies while it is graded is
  reported as such and scores 0; a notebook that loops forever has the stuck
  cells named and still gets the points of every other test.

:func:`grade` grades several submissions in one nbgrader run (one kernel per
notebook); the tests use it to check the solution, the blank release and known
wrong answers together.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from course.grader import speedups
from course.grader.declaration import ANSWERS, DeclarationError, Week, load
from course.grader.speedups import throwaway_gradebook
from course.grader.verdict import NOT_DONE, failure, in_cell, next_step

REPO = Path(__file__).resolve().parents[2]
TIMEOUT_ERROR = "CellTimeoutError"


class GradingError(Exception):
    """The request cannot be graded (bad week or folder) or nbgrader itself failed."""


class UnreadableNotebook(GradingError):
    """A submitted notebook that is not valid notebook JSON. Its message speaks to the
    learner (``make check``); ``path`` and ``detail`` let the instructor's tools say it
    their way."""

    def __init__(self, message: str, path: Path, detail: str):
        super().__init__(message)
        self.path, self.detail = path, detail


@dataclass
class CellResult:
    grade_id: str
    exercise: str  # the heading the cell sits under, without its "(N points)"
    points: float
    earned: float
    message: str = ""  # what the failing test said (its last error line)
    timed_out: bool = False
    kind: str = "test"  # "visible test" or "hidden test"

    @property
    def passed(self) -> bool:
        return self.earned >= self.points

    @property
    def label(self) -> str:
        """What the report calls this cell: "hidden test of Exercise 2 — ..."."""
        return f"{self.kind} of {self.exercise}"


@dataclass
class Report:
    week: int
    student: str
    submission: Path
    tests: list[CellResult] = field(default_factory=list)
    written: list[tuple[str, str, float]] = field(default_factory=list)  # (id, exercise, pts)
    missing: list[str] = field(default_factory=list)  # notebooks not in the submission
    stopped: list[str] = field(default_factory=list)  # cells the time limit stopped
    kernel_died: bool = False  # the notebook's kernel died: nothing could be scored
    conformed: list[str] = field(default_factory=list)  # accidents put right (conform.py)
    flags: list[str] = field(default_factory=list)  # held for a person (flags.py)
    timeout_s: float = 0

    @property
    def earned(self) -> float:
        return sum(t.earned for t in self.tests)

    @property
    def total(self) -> float:
        return sum(t.points for t in self.tests)

    def failed(self) -> list[CellResult]:
        return [t for t in self.tests if not t.passed]

    def summary(self) -> str:
        return f"week{self.week}: {_num(self.earned)}/{_num(self.total)}"

    def rubric(self) -> str:
        """Where a self-learner finds what each written answer must say."""
        rubric = REPO / "rubrics" / f"week{self.week}.md"
        if rubric.is_file():
            return (f"{rubric.relative_to(REPO)} has a model answer for each and says what "
                    "earns each point")
        return f"compare them with the model answers in solutions/week{self.week}/"

    def again(self) -> str:
        """The command that grades this same folder again."""
        default = (REPO / f"week{self.week}").resolve()
        if Path(self.submission).resolve() == default:
            return f"make check WEEK={self.week}"
        return f"make check WEEK={self.week} SUBMISSION={_shown(self.submission)}"

    def lines(self) -> list[str]:
        out = [f"Grading {_shown(self.submission)} with week {self.week}'s tests (the same "
               "tests, hidden ones included, that an instructor runs)", ""]
        if self.kernel_died:
            out += ["  KERNEL DIED: the notebook's Python process died while it was graded, so",
                    "  none of its tests could be scored. Usually a cell killed its own process",
                    "  (os._exit, os.kill(os.getpid(), ...), kill_self() outside run_forked) or",
                    "  ran out of memory. Run the notebook top to bottom in JupyterLab to find",
                    "  the cell after which the kernel restarts.", ""]
        out += [f"  PUT RIGHT: {line}" for line in self.conformed]
        out += [""] if self.conformed else []
        if self.flags:
            out.append("  FLAGGED for a person: this code reaches into the kernel, the grader "
                       "or the course itself, which no exercise needs; an instructor will "
                       "read it before the score counts:")
            out += [f"    FLAG  {line}" for line in self.flags]
            out.append("")
        for name in self.missing:
            out.append(f"  MISSING   {name}: not in {_shown(self.submission)}; its tests score 0")
        if self.stopped:
            out.append(f"  TIME LIMIT: these cells ran for more than {_num(self.timeout_s)} s and "
                       "were stopped (look for a loop that never ends); grading went on:")
            out += [f"    - {where}" for where in self.stopped]
            out.append("")
        for t in self.tests:
            mark = "ok  " if t.passed else ("TIME" if t.timed_out else "FAIL")
            out.append(f"  {mark}  {_num(t.earned):>3}/{_num(t.points):<3} {t.label}  "
                       f"[{t.grade_id}]")
        failed = self.failed()
        if failed:
            first = failed[0]
            said = first.message or "no message (the test cell did not run)"
            answer = first.message.startswith("its answer cell raised ")
            said = said.removeprefix("its answer cell raised ").split("; fix that first")[0]
            out += ["", f"What to do next: {next_step(first.exercise, said, answer=answer)}"]
            out += ["", "What the failing tests said:"]
            for t in failed:
                out.append(f"  - {t.label} [{t.grade_id}]")
                said = t.message or "no message (the test cell did not run)"
                out += [f"      {line}" for line in said.splitlines()]
            out.append("  Fix the code of those exercises, run the notebook top to bottom, save "
                       f"it, and run `{self.again()}` again.")
        if self.written:
            points = sum(p for _, _, p in self.written)
            cells = f"{len(self.written)} cell{'s' if len(self.written) != 1 else ''}"
            out += ["", f"Written answers ({cells}, {_num(points)} points) are not in the total "
                    "below. In a class your instructor grades them; on your own, grade them "
                    f"yourself: {self.rubric()}."]
        out += ["", self.summary()]
        return out


# ---------------------------------------------------------------------- public
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
    scores = _gradebook_scores(config.CourseDirectory.db_url, assignment)
    reports = {student: _report(course, declared, student, Path(folder), notebooks, limit,
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


# ------------------------------------------------------------------- nbgrader
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


# --------------------------------------------------------------------- report
Scores = dict[str, dict[tuple[str, str], float]]  # student → (notebook, grade id) → score


def _gradebook_scores(db_url: str, assignment: str) -> Scores:
    """Every score nbgrader's autograde recorded for ``assignment``, from its gradebook."""
    from nbgrader.api import Gradebook

    scores: Scores = {}
    with Gradebook(db_url) as gradebook:
        for submission in gradebook.assignment_submissions(assignment):
            mine = scores.setdefault(submission.student.id, {})
            for notebook in submission.notebooks:
                for grade in notebook.grades:
                    mine[(notebook.name, grade.name)] = float(grade.score or 0.0)
    return scores


def _report(course: Path, week: Week, student: str, folder: Path, notebooks: list[str],
            timeout_s: float, scores: dict[tuple[str, str], float]) -> Report:
    report = Report(week.number, student, folder, timeout_s=timeout_s)
    for name in notebooks:  # a week has one notebook, weekN.ipynb (declaration.Week)
        graded_path = course / "autograded" / student / f"week{week.number}" / name
        graded = nbformat.read(graded_path, as_version=4) if graded_path.is_file() else None
        if graded is None:
            report.missing.append(name)
        outcomes, stopped = _outcomes(graded) if graded else ({}, [])
        report.stopped += [f"{name}, {where}" for where in stopped]
        for grade_id, points in week.cell_points.items():  # in the notebook's order
            exercise = week.exercise_of(grade_id)
            if exercise is None:  # a written answer
                continue
            message, timed_out = outcomes.get(grade_id, ("", False))
            raised = next((outcomes[a][0] for a in exercise.answers
                           if outcomes.get(a, ("", False))[0]), "")
            if message and raised:  # the test failed because its answer cell did
                message = raised if raised == NOT_DONE else (
                    f"its answer cell raised {raised}; fix that first (the test then said: "
                    f"{message})")
            earned = scores.get((Path(name).stem, grade_id), 0.0) if graded else 0.0
            if earned < points and not message and grade_id in outcomes:
                message = (f"partial credit: the cell's result gave {_num(earned)} of "
                           f"{_num(points)}")
            report.tests.append(CellResult(
                grade_id, exercise.label, points, earned, message, timed_out,
                "hidden test" if grade_id in exercise.hidden else "visible test"))
        report.written += [(w.id, week.written_label(w), w.points) for w in week.written]
    return report


def _outcomes(graded) -> tuple[dict[str, tuple[str, bool]], list[str]]:
    """grade id → (what went wrong, in one line, or ""; stopped by the time limit), for
    every test cell and every answer cell that raised, and a description of every cell the
    time limit stopped. The points come from the gradebook."""
    outcomes, stopped, heading = {}, [], "(before the first heading)"
    for cell in graded.cells:
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type == "markdown":
            titles = re.findall(r"^#{1,3} +(.+)$", cell.source, re.M)
            heading = titles[0].strip() if titles else heading
            continue
        errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
        timed_out = any(o.get("ename") == TIMEOUT_ERROR for o in errors)
        if timed_out:
            first = next((line for line in cell.source.splitlines() if line.strip()), "")
            stopped.append(f"{heading}: the cell starting `{first.strip()[:60]}`")
        if meta.get("solution") and cell.cell_type == "code" and errors:  # an answer cell
            outcomes[meta["grade_id"]] = (failure(
                errors[-1].get("ename"), in_cell(errors[-1].get("evalue"), "the answer cell")),
                timed_out)
        if not meta.get("grade") or meta.get("solution"):
            continue
        stderr = [o for o in cell.get("outputs", [])
                  if o.get("output_type") == "stream" and o.get("name") == "stderr"]
        error = errors[-1] if errors else {}
        message = failure(error.get("ename"), error.get("evalue"),
                          "" if errors else "".join(o.get("text", "") for o in stderr))
        outcomes[meta["grade_id"]] = (message, timed_out)
    return outcomes, stopped


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


def _num(value: float) -> str:
    return f"{value:g}"


def _shown(path: Path) -> str:
    """``path`` as the person at the terminal reads it: relative to their folder, else whole."""
    path = Path(path).resolve()
    try:
        return str(path.relative_to(Path.cwd().resolve())) + "/"
    except ValueError:
        return str(path)


# ------------------------------------------------------------------------ CLI
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m course.grader",
        description="Grade a week's notebook with nbgrader, hidden tests included.")
    parser.add_argument("--week", type=int, help="the week number, e.g. 5")
    parser.add_argument("--release", action="store_true",
                        help="instead of grading: regenerate weekN/ from solutions/weekN/ "
                             "(every week without --week); overwrites weekN/")
    parser.add_argument("--submission", type=Path,
                        help="the folder holding the notebook (default: weekN/ of this repository)")
    parser.add_argument("--timeout", type=int, metavar="SECONDS",
                        help="stop a cell after this long (default: nbgrader_config.py)")
    parser.add_argument("--keep", type=Path, metavar="DIR",
                        help="build the throwaway course in DIR and keep it (to inspect)")
    args = parser.parse_args(argv)
    # Your own notebook, on your own machine: the test guard, not the sandbox's walls
    # (course/sandbox/managers.py); COURSE_GRADING_SANDBOX=on asks for them anyway.
    os.environ.setdefault("COURSE_GRADING_SANDBOX", "off")
    if args.release:
        try:
            for week in [args.week] if args.week else weeks_with_notebooks():
                print(f"released {_shown(release(week))}", flush=True)
        except GradingError as error:
            print(f"make release: {error}", file=sys.stderr)
            return 2
        return 0
    if args.submission is None and (note := other_clone_note()):
        print(note, file=sys.stderr, flush=True)
    if args.week is None:
        if args.submission is not None:
            parser.error("--submission needs --week (make check WEEK=5 SUBMISSION=dir)")
        return _check_every_week(args)
    return _check_one_week(args.week, args.submission or REPO / f"week{args.week}", args)


def other_clone_note(here: Path | None = None, repo: Path = REPO) -> str | None:
    """One line when ``make check`` runs in a clone of the course whose Python imports the
    ``course`` package of another clone (a shared environment): the notebooks graded are then
    that other clone's. None when ``here`` (default: the working folder) is ``repo`` or is not
    a clone of the course."""
    here = (here or Path.cwd()).resolve()
    if here == repo.resolve() or not (here / "course" / "__init__.py").is_file() \
            or not (here / "Makefile").is_file():
        return None
    return (f"make check: note: this Python imports the course from {repo}/course, so it "
            f"grades the notebooks in {repo}/, not in {here}/; run `make setup` in {here} "
            "(or set PYTHONPATH=$PWD) to grade this folder's notebooks")


def weeks_with_notebooks(repo: Path = REPO) -> list[int]:
    """Every week whose source notebook exists in ``solutions/``, in order."""
    return sorted(int(p.name[4:]) for p in (repo / "solutions").glob("week*")
                  if p.name[4:].isdigit() and any(p.glob("*.ipynb")))


def _check_one_week(week: int, folder: Path, args: argparse.Namespace) -> int:
    reports = _graded(week, folder, args)
    if reports is None:
        return 2
    print("\n".join(reports["student"].lines()), flush=True)
    return 0


def _check_every_week(args: argparse.Namespace) -> int:
    """``make check`` with no WEEK: grade every week the learner started (one whose answer
    cells are all still the release's blank is skipped, as ``make test`` skips it), one
    block per week, then a summary and a total over the weeks graded."""
    from course.grader.selfcheck import started

    totals: list[tuple[int, Report | None]] = []
    skipped: list[int] = []
    for week in weeks_with_notebooks():
        folder = REPO / f"week{week}"
        notebook = folder / f"week{week}.ipynb"
        if notebook.is_file() and not started(notebook):
            skipped.append(week)
            continue
        reports = _graded(week, folder, args)
        if reports is not None:
            print("\n".join(reports["student"].lines()), flush=True)
        totals.append((week, reports["student"] if reports else None))
    print("\nsummary", flush=True)
    earned = total = 0.0
    for week, report in totals:
        if report is None:
            print(f"week{week}: not graded (see above)")
            continue
        earned += report.earned
        total += report.total
        print(f"week{week}: {_num(report.earned)}/{_num(report.total)}")
    if skipped:
        print(f"not started (skipped): {', '.join(f'week{w}' for w in skipped)}")
    print(f"total: {_num(earned)}/{_num(total)}" + (" (the weeks you started)" if skipped
                                                    else ""), flush=True)
    return 0 if all(report is not None for _, report in totals) else 2


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


def _graded(week: int, folder: Path, args: argparse.Namespace) -> dict[str, Report] | None:
    """Grade one folder for ``make check``; None (after saying why) when it cannot be graded."""
    try:
        check_request(week, [folder])
    except GradingError as error:
        print(f"make check: {error}", file=sys.stderr)
        return None
    print(f"nbgrader is running {_shown(folder)} (as saved on disk) in a fresh kernel with "
          "every test, hidden ones included; that takes as long as running the notebook top "
          "to bottom, plus a few seconds...", flush=True)
    started = time.monotonic()
    try:
        report, noticed = check_notebook(week, folder, timeout_s=args.timeout, keep=args.keep)
    except GradingError as error:
        print(f"make check: {error}", file=sys.stderr)
        return None
    for line in noticed:  # "rewired the kernel's ...", "exercise 5 calls the course's ..."
        print(f"note: {line}", flush=True)
    print(f"graded in {time.monotonic() - started:.0f} s", flush=True)
    return {"student": report}


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


if __name__ == "__main__":
    raise SystemExit(main())
