"""The instructor's nbgrader path, one command per step (``docs/instructors.md``).

``python -m course.grading.instructor <step> --week N`` (the Makefile targets call it):

- ``release`` (every week without ``--week``): ``nbgrader generate_assignment
  --force`` into ``weekN/`` *and* the
  repository's gradebook (``gradebook.db``, ignored by git, or ``--db-url``), so
  ``autograde`` and the formgrader know the assignment. Every step re-registers the
  week when its grade cells differ from ``solutions/weekN`` (:func:`in_sync`).
- ``to-students``: creates the exchange folder (``nbgrader_config.py``; ``exchange/``
  by default, ``COURSE_EXCHANGE`` elsewhere) writable by every account, then
  ``nbgrader release_assignment``.
- ``collect``: ``nbgrader collect --update`` into ``submitted/<student>/weekN/``.
- ``grade``: every submission in ``submitted/``, graded in parallel and sandboxed
  (:mod:`course.grading.classgrade`), merged into the gradebook, feedback made, and
  ``grades/weekN.csv`` written (:func:`export`).
- ``feedback``: ``nbgrader generate_feedback`` from the gradebook (after manual grading).
- ``return``: ``nbgrader release_feedback``; refuses (one line per student) while
  written answers still wait for a grader, unless ``--anyway``.
- ``export``: ``grades/weekN.csv`` from the gradebook.

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
from dataclasses import dataclass
from pathlib import Path

import nbformat

from course.grading import speedups
from course.grading.autograde import REPO, GradingError, weeks_with_notebooks
from course.grading.declaration import DeclarationError, load

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
    command = [str(Path(sys.executable).parent / "nbgrader"), *args,
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
            disagrees with it (:func:`course.grading.declaration.load`): nothing is released.
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

    from course.grading.merge import notes_of

    found = []
    with Gradebook(db_url_of(repo, db_url)) as gb:
        notes = notes_of(gb, f"week{week}")
        for sub in gb.assignment_submissions(f"week{week}"):
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
    found += [Row(student, "", 0.0, auto_max, None, manual_max, note)  # could not be graded
              for student, note in notes.items() if student not in graded]
    return sorted(found, key=lambda r: r.student)


def maxima(repo: Path, week: int) -> tuple[float, float]:
    """(autograded points, points for written answers) of ``solutions/weekN``."""
    from course.grading.rubric import written_answers

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

    from course.grading import late

    rule = late.plugin(course_config(repo, db_url))
    with Gradebook(db_url_of(repo, db_url)) as gb:
        late.apply_penalties(gb, f"week{week}", rule)
        gb.db.commit()


def export(week: int, repo: Path = REPO, db_url: str | None = None) -> Path:
    """Write ``grades/weekN.csv`` (git ignores ``grades/``) from the gradebook, late
    penalties recomputed first, and ``grades/weekN-regrades.csv`` when a resubmission set
    hand grades aside."""
    from nbgrader.api import Gradebook

    from course.grading.merge import regrade_log

    refresh_penalties(week, repo, db_url)
    target = Path(repo) / GRADES_DIR / f"week{week}.csv"
    target.parent.mkdir(exist_ok=True)
    _write_csv(target, HEADER, [r.cells() for r in rows(week, repo, db_url)])
    with Gradebook(db_url_of(repo, db_url)) as gb:
        log = regrade_log(gb, f"week{week}")
    if log:
        columns = ["student", "notebook", "cell", "old_score", "old_extra_credit",
                   "old_comment", "logged_at"]
        _write_csv(target.with_name(f"week{week}-regrades.csv"), columns,
                   [["" if e[c] is None else e[c] for c in columns] for e in log])
    return target


def _write_csv(target: Path, header: list[str], lines: list[list]) -> None:
    """Write a CSV whole: to a sibling first, then renamed over ``target``."""
    partial = target.with_name(f".{target.name}.{os.getpid()}")
    with open(partial, "w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(header)
        writer.writerows(lines)
    partial.replace(target)


def pending_manual(week: int, repo: Path = REPO, db_url: str | None = None) -> list[str]:
    return [r.student for r in rows(week, repo, db_url) if r.manual_state == "not yet graded"]


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
                      for k in ("first_name", "last_name", "email")}
            gb.update_or_create_student(row["id"].strip(), **fields)
    return len(students)


def set_due_date(week: int, due: str, repo: Path = REPO, db_url: str | None = None) -> str:
    """Record week N's due date in the gradebook (registering the week first)."""
    from nbgrader.api import Gradebook

    from course.grading import late

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
    parser = argparse.ArgumentParser(prog="python -m course.grading.instructor",
                                     description="The instructor's nbgrader steps.")
    parser.add_argument("step", choices=["release", "to-students", "collect", "grade",
                                         "feedback", "return", "export", "roster", "due"])
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
                        help="grade: only this student (repeat for more)")
    parser.add_argument("--file", type=Path, help="roster: the CSV (id, first_name, "
                                                   "last_name, email)")
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
            from course.grading.classgrade import grade_class

            return grade_class(week, repo, workers=args.workers, db_url=url,
                               sandbox=args.sandbox, timeout_s=args.timeout,
                               students=args.student)
        elif args.step == "feedback":
            ensure_registered(week, repo, url)
            refresh_penalties(week, repo, url)
            run_converter("generate_feedback", course_config(repo, url), f"week{week}")
            print(f"feedback for week{week} is in feedback/<student>/week{week}/", flush=True)
        elif args.step == "return":
            waiting = pending_manual(week, repo, url)
            if waiting and not args.anyway:
                for student in waiting:
                    print(f"{student}: written answers not graded yet (formgrader, then "
                          f"`make feedback WEEK={week}`)", file=sys.stderr)
                print("make return-feedback: not released; add ANYWAY=1 to release "
                      "anyway", file=sys.stderr)
                return 2
            open_exchange(repo)
            nbgrader(["release_feedback", f"week{week}"], repo, url)
            print(f"feedback for week{week} released; students run "
                  f"`nbgrader fetch_feedback week{week}`", flush=True)
        elif args.step == "export":
            print(f"wrote {export(week, repo, url).relative_to(repo)}", flush=True)
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
