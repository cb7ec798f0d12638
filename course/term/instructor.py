"""The instructor's nbgrader path, one command per step (``docs/instructors.md``).

``python -m course.term.instructor <step> --week N`` (the Makefile targets call it):

- ``release`` (every week without ``--week``): ``nbgrader generate_assignment
  --force`` into ``weekN/`` *and* the
  repository's gradebook (``gradebook.db``, ignored by git, or ``--db-url``), so
  ``autograde`` and the formgrader know the assignment. Every step re-registers the
  week when its grade cells differ from ``solutions/weekN``
  (:func:`course.term.coursedir.in_sync`).
- ``to-students``: creates the exchange folder (``nbgrader_config.py``; ``exchange/``
  by default, ``COURSE_EXCHANGE`` elsewhere) writable by every account, then
  ``nbgrader release_assignment``.
- ``collect``: ``nbgrader collect --update`` into ``submitted/<student>/weekN/``.
- ``collect-lms``: an LMS's download (a zip) into ``submitted/`` with nbgrader's
  ``zip_collect`` (:mod:`course.term.lms`).
- ``grade``: every submission in ``submitted/``, graded in parallel and sandboxed
  (:mod:`course.term.classgrade`), merged into the gradebook, feedback made, and
  ``grades/weekN.csv`` written (:func:`course.term.grades.export`).
- ``feedback``: ``nbgrader generate_feedback`` from the gradebook (after manual grading).
- ``return``: ``nbgrader release_feedback`` to every student it can reach; refuses (one
  line per student) while written answers still wait for a grader, unless ``--anyway``;
  names who was left out and why (:func:`return_feedback`).
- ``export``: ``grades/weekN.csv`` from the gradebook, and ``grades/weekN-canvas.csv``
  for an LMS's gradebook import (:func:`course.term.grades.canvas_rows`).
- ``extend``: nbgrader's extension for one student (:func:`grant_extension`).

Every nbgrader call runs with this virtualenv's ``bin/`` on PATH (nbgrader starts
``alembic`` as a program). Errors are one line and exit status 2.
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import warnings
from pathlib import Path

from course.grader.autograde import REPO, GradingError, weeks_with_notebooks
from course.term.coursedir import (
    course_config,
    db_url_of,
    ensure_registered,
    nbgrader,
    open_exchange,
    release,
    run_converter,
    tools_on_path,
)
from course.term.grades import canvas_path, export, refresh_penalties, rows


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
                        help="run each kernel sandboxed (auto: wherever bubblewrap works)")
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
