"""The instructor's nbgrader path, one command per step (``docs/instructors.md``).

``python -m course.term.instructor <step> --week N`` (the Makefile targets call it):

- ``release`` (every week without ``--week``): ``nbgrader generate_assignment
  --force`` into ``weekN/`` *and* the
  repository's gradebook (``gradebook.db``, ignored by git, or ``--db-url``), so
  ``autograde`` and the formgrader know the assignment. Every step re-registers the
  week when its grade cells differ from ``solutions/weekN`` (:func:`in_sync`).
- ``to-students``: creates the exchange folder (``nbgrader_config.py``; ``exchange/``
  by default, ``COURSE_EXCHANGE`` elsewhere) writable by every account, then
  ``nbgrader release_assignment``.
- ``collect``: ``nbgrader collect --update`` into ``submitted/<student>/weekN/``.
- ``collect-lms``: an LMS's download (a zip) into ``submitted/`` with nbgrader's
  ``zip_collect`` (:mod:`course.term.lms`).
- ``grade``: every submission in ``submitted/``, graded in parallel and sandboxed
  (:mod:`course.term.classgrade`), merged into the gradebook, feedback made, and
  ``grades/weekN.csv`` written (:func:`export`).
- ``feedback``: ``nbgrader generate_feedback`` from the gradebook (after manual grading).
- ``return``: ``nbgrader release_feedback`` to every student it can reach; refuses (one
  line per student) while written answers still wait for a grader, unless ``--anyway``;
  names who was left out and why (:func:`return_feedback`).
- ``export``: ``grades/weekN.csv`` from the gradebook, and ``grades/weekN-canvas.csv``
  for an LMS's gradebook import (:func:`canvas_rows`).
- ``extend``: nbgrader's extension for one student (:func:`grant_extension`).

Every nbgrader call runs with this virtualenv's ``bin/`` on PATH (nbgrader starts
``alembic`` as a program). Errors are one line and exit status 2.
"""

from __future__ import annotations

import argparse
import csv
import os
import stat
import subprocess
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path

import nbformat

from course.grader import speedups
from course.grader.autograde import REPO, GradingError, weeks_with_notebooks
from course.grader.declaration import load
from course.grader.week import DeclarationError

GRADES_DIR = "grades"


# --------------------------------------------------------------------- nbgrader
def tools_on_path(env: dict[str, str] | None = None) -> dict[str, str]:
    """``env`` (default: this process's) with this interpreter's ``bin/`` first on PATH."""
    env = os.environ if env is None else env
    bin_dir = str(Path(sys.executable).parent)
    if bin_dir not in env.get("PATH", "").split(os.pathsep):
        env["PATH"] = bin_dir + os.pathsep + env.get("PATH", "")
    return env


def db_url_of(repo: Path, db_url: str | None = None) -> str:
    """The gradebook's SQLAlchemy URL: ``db_url``, ``COURSE_DB_URL`` or ``gradebook.db``;
    a ``postgresql://`` URL is driven by psycopg 3 (the driver the course installs)."""
    url = db_url or os.environ.get("COURSE_DB_URL") or f"sqlite:///{Path(repo) / 'gradebook.db'}"
    for scheme in ("postgresql://", "postgres://"):
        if url.startswith(scheme):
            return "postgresql+psycopg://" + url.removeprefix(scheme)
    return url


def course_config(repo: Path = REPO, db_url: str | None = None):
    """The repository's ``nbgrader_config.py`` with the course root and gradebook set."""
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(repo)).load_config()
    config.CourseDirectory.root = str(repo)
    config.CourseDirectory.db_url = db_url_of(repo, db_url)
    return config


def run_converter(name: str, config, assignment: str, student: str | None = None) -> None:
    """Run nbgrader's ``generate_assignment`` / ``autograde`` / ``generate_feedback`` in this
    process; :class:`GradingError` with nbgrader's log when it fails."""
    from nbgrader import converters
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.utils import capture_log

    tools_on_path()
    speedups.install()
    classes = {"generate_assignment": converters.GenerateAssignment,
               "autograde": converters.Autograde,
               "generate_feedback": converters.GenerateFeedback}
    coursedir = CourseDirectory(config=config)
    coursedir.assignment_id = assignment
    if student:
        coursedir.student_id = student
    app = classes[name](coursedir=coursedir, config=config)
    speedups.lighten(app)
    app.force = True
    result = capture_log(app)
    if not result["success"]:
        raise GradingError(f"nbgrader {name} {assignment} failed: "
                           f"{result.get('error', '') or result.get('log', '')}".strip())


def nbgrader(args: list[str], repo: Path = REPO, db_url: str | None = None,
             ) -> subprocess.CompletedProcess:
    """``nbgrader <args>`` as a program, from the course root, with the tools on PATH."""
    env = tools_on_path(dict(os.environ))
    command = [sys.executable, "-m", "nbgrader", *args,
               f"--CourseDirectory.db_url={db_url_of(repo, db_url)}"]
    done = subprocess.run(command, cwd=repo, env=env, capture_output=True, text=True)
    if done.returncode:
        last = [line for line in (done.stderr + done.stdout).splitlines() if line.strip()]
        raise GradingError(f"nbgrader {args[0]} failed: {last[-1] if last else done.returncode}")
    return done


# ------------------------------------------------------------ the gradebook
def source_cells(repo: Path, week: int) -> set[tuple[str, str, float]]:
    """(notebook, grade id, points) of every graded cell in ``solutions/weekN``."""
    found = set()
    for path in sorted((Path(repo) / "solutions" / f"week{week}").glob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            meta = cell.metadata.get("nbgrader", {})
            if meta.get("grade"):
                found.add((path.stem, meta["grade_id"], float(meta.get("points", 0))))
    return found


def in_sync(repo: Path, week: int, db_url: str | None = None) -> bool:
    """The gradebook holds ``weekN`` with exactly the graded cells of its source."""
    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(db_url_of(repo, db_url)) as gb:
        try:
            assignment = gb.find_assignment(f"week{week}")
        except MissingEntry:
            return False
        held = {(nb.name, cell.name, float(cell.max_score))
                for nb in assignment.notebooks for cell in nb.grade_cells}
    return held == source_cells(repo, week)


def release(week: int, repo: Path = REPO, db_url: str | None = None) -> Path:
    """Regenerate ``weekN/`` from ``solutions/weekN/`` and register it in the gradebook.

    Raises:
        GradingError: no source notebook, or its declaration (``week.toml``) is missing or
            disagrees with it (:func:`course.grader.declaration.load`): nothing is released.
    """
    if not any((Path(repo) / "solutions" / f"week{week}").glob("*.ipynb")):
        raise GradingError(f"solutions/week{week} has no notebook to release")
    try:
        load(week, Path(repo))
    except DeclarationError as error:
        raise GradingError(str(error)) from None
    run_converter("generate_assignment", course_config(repo, db_url), f"week{week}")
    return Path(repo) / f"week{week}"


def ensure_registered(week: int, repo: Path = REPO, db_url: str | None = None) -> bool:
    """Register ``weekN`` (regenerating its release) when the gradebook is out of date;
    True if it had to."""
    if in_sync(repo, week, db_url):
        return False
    release(week, repo, db_url)
    return True


# ------------------------------------------------------------- the exchange
def exchange_root(repo: Path = REPO) -> Path:
    return Path(course_config(repo).Exchange.root)


def open_exchange(repo: Path = REPO) -> Path:
    """Create the exchange folder, writable by every account (sticky, like /tmp)."""
    root = exchange_root(repo)
    root.mkdir(parents=True, exist_ok=True)
    if stat.S_IMODE(root.stat().st_mode) != 0o1777:
        root.chmod(0o1777)
    return root


# ----------------------------------------------------------------- exports
@dataclass
class Row:
    """One student's line of ``grades/weekN.csv``."""

    student: str
    submitted_at: str
    autograded: float
    autograded_max: float
    manual: float | None  # None: a written answer still waits for a person
    manual_max: float
    note: str = ""
    late_hours: float = 0.0
    late_penalty: float = 0.0
    first_name: str = ""
    last_name: str = ""
    graded: bool = True  # False: the submission could not be graded (the note says why)

    @property
    def manual_state(self) -> str:
        if self.manual_max == 0:
            return "none"
        return "not yet graded" if self.manual is None else "graded"

    def cells(self) -> list[str]:
        total = self.autograded + (self.manual or 0) - self.late_penalty
        return [self.student, self.first_name, self.last_name, self.submitted_at,
                f"{self.late_hours:.1f}" if self.late_hours else "",
                f"{self.autograded:g}", f"{self.autograded_max:g}",
                "" if self.manual is None else f"{self.manual:g}", f"{self.manual_max:g}",
                self.manual_state, f"{self.late_penalty:g}", f"{total:g}",
                f"{self.autograded_max + self.manual_max:g}", self.note]


HEADER = ["student", "first_name", "last_name", "submitted_at", "late_hours", "autograded",
          "autograded_max", "manual", "manual_max", "manual_state", "late_penalty",
          "total_so_far", "total_max", "note"]


def rows(week: int, repo: Path = REPO, db_url: str | None = None) -> list[Row]:
    """One :class:`Row` per student with a ``weekN`` submission in the gradebook, and one
    (0 points, its note) per student whose submission could not be graded. A written
    answer counts once it has a hand grade or nbgrader needs no person for it (untouched:
    nbgrader scores it 0); until then the row's ``manual`` is empty, never a silent 0."""
    from nbgrader.api import Gradebook

    from course.term.merge import notes_of

    found = []
    with Gradebook(db_url_of(repo, db_url)) as gb:
        notes = notes_of(gb, f"week{week}")
        names = {s.id: (s.first_name or "", s.last_name or "") for s in gb.students}
        for sub in gb.assignment_submissions(f"week{week}"):
            if not _was_graded(sub):  # an extension granted before any grading
                continue
            auto = auto_max = manual_max = penalty = 0.0
            manual: float | None = 0.0
            for nb in sub.notebooks:
                penalty += float(nb.late_submission_penalty or 0)
                for grade in nb.grades:
                    points = float(grade.max_score or 0)
                    if grade.cell.type == "markdown" or _is_written(grade):
                        manual_max += points
                        if grade.needs_manual_grade and grade.manual_score is None:
                            manual = None
                        elif manual is not None:
                            manual += float(grade.score or 0)
                    else:
                        auto_max += points
                        auto += float(grade.score or 0)
            stamp = sub.timestamp.isoformat(sep=" ", timespec="seconds") if sub.timestamp else ""
            student = sub.student
            found.append(Row(sub.student_id, stamp, auto, auto_max, manual, manual_max,
                             notes.get(sub.student_id, ""), sub.total_seconds_late / 3600,
                             penalty, student.first_name or "", student.last_name or ""))
    graded = {row.student for row in found}
    auto_max, manual_max = maxima(repo, week)
    for student, note in notes.items():  # could not be graded: 0 points, the note says why
        if student not in graded:
            first, last = names.get(student, ("", ""))
            found.append(Row(student, submitted_at(repo, week, student), 0.0, auto_max,
                             None, manual_max, note, first_name=first, last_name=last,
                             graded=False))
    return sorted(found, key=lambda r: r.student)


def _was_graded(submission) -> bool:
    """nbgrader made this submission's scores (autograde, or a hand grade): not an entry
    :func:`extend` created for a student who has not been graded yet."""
    return any(grade.auto_score is not None or grade.manual_score is not None
               for nb in submission.notebooks for grade in nb.grades)


def submitted_at(repo: Path, week: int, student: str) -> str:
    """The time in ``submitted/<student>/weekN/timestamp.txt``, as the CSV writes times
    (UTC), or "" when there is none or it is not a time."""
    from nbgrader.utils import parse_utc

    stamp = Path(repo) / "submitted" / student / f"week{week}" / "timestamp.txt"
    try:
        return parse_utc(stamp.read_text().strip()).isoformat(sep=" ", timespec="seconds")
    except (OSError, ValueError, OverflowError, TypeError):
        return ""


def roster_ids(repo: Path = REPO, db_url: str | None = None) -> set[str]:
    """The ids of the students the class list put in the gradebook (a name, an email or
    an LMS id recorded); nbgrader itself adds bare ids for whoever it grades."""
    from nbgrader.api import Gradebook

    with Gradebook(db_url_of(repo, db_url)) as gb:
        return {s.id for s in gb.students
                if s.first_name or s.last_name or s.email or s.lms_user_id}


def maxima(repo: Path, week: int) -> tuple[float, float]:
    """(autograded points, points for written answers) of ``solutions/weekN``."""
    from course.term.rubric import written_answers

    written: dict[str, float] = {}
    for path in sorted((Path(repo) / "solutions" / f"week{week}").glob("*.ipynb")):
        written.update(written_answers(nbformat.read(path, as_version=4)))
    everything = sum(points for _, _, points in source_cells(repo, week))
    return everything - sum(written.values()), sum(written.values())


def _is_written(grade) -> bool:
    """A grade cell that is also a solution cell: an answer a person grades."""
    from nbgrader.api import SolutionCell

    notebook = grade.cell.notebook
    return any(isinstance(c, SolutionCell) and c.name == grade.cell.name
               for c in notebook.solution_cells)


def refresh_penalties(week: int, repo: Path = REPO, db_url: str | None = None) -> None:
    """Recompute every late notebook's penalty from its current score (hand grades entered
    since autograding included), with the configured late-submission plugin."""
    from nbgrader.api import Gradebook

    from course.term import late

    rule = late.plugin(course_config(repo, db_url))
    with Gradebook(db_url_of(repo, db_url)) as gb:
        late.apply_penalties(gb, f"week{week}", rule)
        gb.db.commit()


def export(week: int, repo: Path = REPO, db_url: str | None = None) -> Path:
    """Write ``grades/weekN.csv`` (git ignores ``grades/``) from the gradebook, late
    penalties recomputed first, and ``grades/weekN-regrades.csv`` when a resubmission set
    hand grades aside."""
    from nbgrader.api import Gradebook

    from course.term.merge import regrade_log

    refresh_penalties(week, repo, db_url)
    target = Path(repo) / GRADES_DIR / f"week{week}.csv"
    target.parent.mkdir(exist_ok=True)
    table = rows(week, repo, db_url)
    _write_csv(target, HEADER, [r.cells() for r in table])
    canvas_header, canvas_lines = canvas_rows(week, table, repo, db_url)
    _write_csv(canvas_path(target), canvas_header, canvas_lines)
    with Gradebook(db_url_of(repo, db_url)) as gb:
        log = regrade_log(gb, f"week{week}")
    if log:
        columns = ["student", "notebook", "cell", "old_score", "old_extra_credit",
                   "old_comment", "logged_at"]
        _write_csv(target.with_name(f"week{week}-regrades.csv"), columns,
                   [["" if e[c] is None else e[c] for c in columns] for e in log])
    return target


STRANGER = "not on the class list"  # the CSV note of a submitter the roster does not name


def canvas_path(course_csv: Path) -> Path:
    """Where :func:`export` writes the Canvas CSV beside ``grades/weekN.csv``."""
    return course_csv.with_name(f"{course_csv.stem}-canvas.csv")


CANVAS_HEADER = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]


def canvas_rows(week: int, table: list[Row], repo: Path = REPO, db_url: str | None = None,
                ) -> tuple[list[str], list[list[str]]]:
    """``grades/weekN-canvas.csv``: the shape of Canvas's own gradebook export, which its
    *Import* reads back (Student, ID, SIS User ID, SIS Login ID, Section, one column per
    assignment, a "Points Possible" line first). ID is nbgrader's ``lms_user_id`` (the
    roster's ``lms_user_id`` column: the Canvas user id), SIS Login ID the course's student
    id. The score is ``total_so_far``, left empty while written answers wait for a grader
    or when the notebook could not be graded (Canvas leaves an empty cell alone). A
    submitter not on the class list has no Canvas user to match and is left out (the
    course's CSV keeps their row and its note)."""
    from nbgrader.api import Gradebook

    with Gradebook(db_url_of(repo, db_url)) as gb:
        lms = {s.id: s.lms_user_id or "" for s in gb.students}
    column = f"week{week}"
    possible = [f"{r.autograded_max + r.manual_max:g}" for r in table[:1]] or [""]
    lines = [["    Points Possible", "", "", "", "", *possible]]
    for r in table:
        if STRANGER in (r.note or ""):
            continue
        name = ", ".join(part for part in (r.last_name, r.first_name) if part) or r.student
        total = r.autograded + (r.manual or 0) - r.late_penalty
        done = r.graded and r.manual_state != "not yet graded"
        lines.append([name, lms.get(r.student, ""), "", r.student, "",
                      f"{total:g}" if done else ""])
    return [*CANVAS_HEADER, column], lines


def _write_csv(target: Path, header: list[str], lines: list[list]) -> None:
    """Write a CSV whole: to a sibling first, then renamed over ``target``."""
    partial = target.with_name(f".{target.name}.{os.getpid()}")
    with open(partial, "w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(header)
        writer.writerows(lines)
    partial.replace(target)


def pending_manual(week: int, repo: Path = REPO, db_url: str | None = None) -> list[str]:
    """Students graded by nbgrader whose written answers still wait for a person (a row that
    could not be graded waits for a new notebook, not for a grader)."""
    return [r.student for r in rows(week, repo, db_url)
            if r.graded and r.manual_state == "not yet graded"]


def return_feedback(week: int, repo: Path = REPO, db_url: str | None = None,
                    anyway: bool = False) -> int:
    """``nbgrader release_feedback`` for every student it can reach, each other student
    named with the reason on stdout; 2 (nothing released) while written answers wait for
    a grader, unless ``anyway``.

    Left out: a submission that could not be graded (its note); one with no feedback yet;
    one that did not come through the exchange (no ``submission_secret.txt``: placed by
    hand or by ``make collect-lms``), whose student could not fetch it (nbgrader names the
    released file after that secret): its feedback file is named for the instructor to
    hand back through the LMS."""
    assignment = f"week{week}"
    table = rows(week, repo, db_url)
    waiting = [r.student for r in table if r.graded and r.manual_state == "not yet graded"]
    if waiting and not anyway:
        for student in waiting:
            print(f"{student}: written answers not graded yet (formgrader, then "
                  f"`make feedback WEEK={week}`)", file=sys.stderr)
        print("make return-feedback: not released; add ANYWAY=1 to release anyway",
              file=sys.stderr)
        return 2
    feedback = Path(repo) / "feedback"
    folders = {p.parent.name: p for p in sorted(feedback.glob(f"*/{assignment}")) if p.is_dir()}
    ready, left_out = [], {}
    for row in table:
        folder = folders.get(row.student)
        pages = sorted(folder.glob("*.html")) if folder else []
        if not row.graded:
            left_out[row.student] = row.note.removeprefix("not graded: ")
        elif not pages:
            left_out[row.student] = f"no feedback yet (make feedback WEEK={week})"
        elif not (folder / "submission_secret.txt").is_file() \
                or not (folder / "timestamp.txt").is_file():
            shown = ", ".join(str(p.relative_to(repo)) for p in pages)
            left_out[row.student] = ("submitted outside the exchange (no "
                                     "submission_secret.txt, e.g. an LMS download), so "
                                     f"`nbgrader fetch_feedback` cannot find it: give them "
                                     f"{shown} yourself (e.g. through the LMS)")
        else:
            ready.append(row.student)
    if ready:
        open_exchange(repo)
        others = sorted(set(folders) - set(ready))
        nbgrader(["release_feedback", assignment,
                  *([f"--CourseDirectory.student_id_exclude={','.join(others)}"]
                    if others else [])], repo, db_url)
        print(f"feedback for {assignment} released to {len(ready)} student(s): "
              f"{', '.join(ready)}; they run `nbgrader fetch_feedback {assignment}`",
              flush=True)
    else:
        print(f"feedback for {assignment}: nobody to release it to through the exchange",
              flush=True)
    for student, why in left_out.items():
        print(f"{student}: not returned: {why}", flush=True)
    return 0


def grant_extension(week: int, student: str, hours: float, repo: Path = REPO,
                    db_url: str | None = None) -> str:
    """Give ``student`` ``hours`` more for week N with nbgrader's own extension
    (``Gradebook.grant_extension``: it replaces an earlier one; 0 removes it), so the late
    rule, ``make export`` and the formgrader all count from the extended date. A student
    not graded yet gets nbgrader's empty submission entry to hold it. The new due date for
    that student, as text."""
    from nbgrader.api import Gradebook, MissingEntry
    from sqlalchemy.exc import SAWarning

    if hours < 0:
        raise GradingError(f"HOURS must be 0 (remove the extension) or more, not {hours:g}")
    ensure_registered(week, repo, db_url)
    assignment = f"week{week}"
    with Gradebook(db_url_of(repo, db_url)) as gb:
        try:
            gb.find_student(student)
        except MissingEntry:
            raise GradingError(f"{student} is not in the gradebook: check the id, or add "
                               "them with make roster FILE=students.csv") from None
        if gb.find_assignment(assignment).duedate is None:
            raise GradingError(f"week{week} has no due date, so an extension changes "
                               f"nothing (make due WEEK={week} DUE='2026-12-10 17:00 UTC')")
        try:
            gb.find_submission(assignment, student)
        except MissingEntry:
            with warnings.catch_warnings():  # nbgrader's own autoflush notes, harmless
                warnings.filterwarnings("ignore", category=SAWarning)
                gb.add_submission(assignment, student)
        gb.grant_extension(assignment, student, hours=hours)
        due = gb.find_submission(assignment, student).duedate
    refresh_penalties(week, repo, db_url)
    return due.isoformat(sep=" ", timespec="minutes") + " UTC"


def import_roster(path: Path, repo: Path = REPO, db_url: str | None = None) -> int:
    """Add or update every student of a CSV roster (columns ``id``, ``first_name``,
    ``last_name``, ``email``: what ``nbgrader db student import`` reads, done here with
    nbgrader's Gradebook API, so no ``nbgrader`` program is needed on PATH); how many.
    :class:`GradingError` in one line for a file that is not such a roster; nothing is
    written then."""
    from nbgrader.api import Gradebook

    path = Path(path)
    if not path.is_file():
        raise GradingError(f"{path}: no such file (a CSV with columns id, first_name, "
                           "last_name, email)")
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        if "id" not in (reader.fieldnames or []):
            raise GradingError(f"{path}: the first line must name the columns, with an 'id' "
                               f"column (found: {', '.join(reader.fieldnames or []) or 'none'})")
        students = [row for row in reader if (row.get("id") or "").strip()]
    with Gradebook(db_url_of(repo, db_url)) as gb:
        for row in students:
            fields = {k: (row.get(k) or "").strip() or None
                      for k in ("first_name", "last_name", "email", "lms_user_id")}
            gb.update_or_create_student(row["id"].strip(), **fields)
    return len(students)


def set_due_date(week: int, due: str, repo: Path = REPO, db_url: str | None = None) -> str:
    """Record week N's due date in the gradebook (registering the week first)."""
    from nbgrader.api import Gradebook

    from course.term import late

    try:
        late.parse_due(due)
    except ValueError as error:
        raise GradingError(str(error)) from None
    ensure_registered(week, repo, db_url)
    with Gradebook(db_url_of(repo, db_url)) as gb:
        when = late.set_due(gb, f"week{week}", due)
    return when.isoformat(sep=" ", timespec="minutes") + " UTC"


# ------------------------------------------------------------------------ CLI
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m course.term.instructor",
                                     description="The instructor's nbgrader steps.")
    parser.add_argument("step", choices=["release", "to-students", "collect", "collect-lms",
                                         "grade", "feedback", "return", "export", "roster",
                                         "due", "extend"])
    parser.add_argument("--week", type=int, help="the week (release without it: every week)")
    parser.add_argument("--db-url", help="gradebook URL (default: sqlite gradebook.db in the "
                                         "repository; postgresql://... for Postgres)")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                        help="grade this many submissions at once (default: the cores)")
    parser.add_argument("--sandbox", choices=["auto", "on", "off"], default="auto",
                        help="run each kernel sandboxed (auto: when root)")
    parser.add_argument("--timeout", type=int, metavar="SECONDS",
                        help="grade: stop a cell after this long (default: nbgrader_config.py)")
    parser.add_argument("--anyway", action="store_true",
                        help="return: release feedback even if written answers are ungraded")
    parser.add_argument("--student", action="append",
                        help="grade: only this student (repeat for more); extend: the "
                             "student")
    parser.add_argument("--file", type=Path, help="roster: the CSV (id, first_name, "
                                                   "last_name, email[, lms_user_id]); "
                                                   "collect-lms: the LMS's download")
    parser.add_argument("--pattern", help="collect-lms: the regular expression that reads "
                                          "a file's path (course.term.lms)")
    parser.add_argument("--hours", type=float, help="extend: hours past the due date")
    parser.add_argument("--due", help="due: the week's due date, e.g. '2026-12-10 17:00 UTC'")
    parser.add_argument("--repo", type=Path, default=REPO, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    repo, week, url = args.repo.resolve(), args.week, args.db_url
    if week is None and args.step not in ("release", "roster"):
        parser.error(f"{args.step} needs --week (make {args.step} WEEK=5)")
    tools_on_path()
    try:
        if args.step == "release":
            for each in [week] if week else weeks_with_notebooks(repo):
                print(f"released {release(each, repo, url).name}/ and registered week{each} "
                      "in the gradebook", flush=True)
        elif args.step == "to-students":
            ensure_registered(week, repo, url)
            root = open_exchange(repo)
            nbgrader(["release_assignment", f"week{week}", "--force"], repo, url)
            print(f"week{week} is in the exchange ({root}); students run "
                  f"`nbgrader fetch_assignment week{week}`", flush=True)
        elif args.step == "collect":
            open_exchange(repo)
            nbgrader(["collect", f"week{week}", "--update"], repo, url)
            found = sorted(p.parent.name for p in (repo / "submitted").glob(f"*/week{week}"))
            print(f"collected week{week}: {len(found)} submission(s) in submitted/: "
                  f"{', '.join(found) or 'none'}", flush=True)
        elif args.step == "grade":
            from course.term.classgrade import grade_class

            return grade_class(week, repo, workers=args.workers, db_url=url,
                               sandbox=args.sandbox, timeout_s=args.timeout,
                               students=args.student)
        elif args.step == "feedback":
            ensure_registered(week, repo, url)
            refresh_penalties(week, repo, url)
            run_converter("generate_feedback", course_config(repo, url), f"week{week}")
            print(f"feedback for week{week} is in feedback/<student>/week{week}/", flush=True)
        elif args.step == "return":
            return return_feedback(week, repo, url, args.anyway)
        elif args.step == "collect-lms":
            from course.term.lms import collect as collect_lms

            if args.file is None:
                parser.error("collect-lms needs --file (make collect-lms WEEK=1 "
                             "FILE=download.zip)")
            ensure_registered(week, repo, url)
            for line in collect_lms(week, args.file, repo, args.pattern, url):
                print(line, flush=True)
        elif args.step == "extend":
            if not args.student or len(args.student) != 1 or args.hours is None:
                parser.error("extend needs one --student and --hours (make extend WEEK=1 "
                             "STUDENT=bo HOURS=48)")
            due = grant_extension(week, args.student[0], args.hours, repo, url)
            print(f"{args.student[0]}: week{week} extended by {args.hours:g} h: due {due} "
                  "(nbgrader's extension: make grade, make export and the formgrader count "
                  "lateness from it)", flush=True)
        elif args.step == "export":
            path = export(week, repo, url).relative_to(repo)
            print(f"wrote {path} and {canvas_path(path)} (for an LMS import)", flush=True)
        elif args.step == "roster":
            if args.file is None:
                parser.error("roster needs --file (make roster FILE=students.csv)")
            count = import_roster(args.file, repo, url)
            print(f"roster: {count} student(s) from {args.file} in the gradebook", flush=True)
        elif args.step == "due":
            if not args.due:
                parser.error("due needs --due (make due WEEK=5 DUE='2026-12-10 17:00 UTC')")
            when = set_due_date(week, args.due, repo, url)
            print(f"week{week} is due {when}; later submissions get the late penalty of "
                  "nbgrader_config.py", flush=True)
    except GradingError as error:
        print(f"make {args.step}: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
