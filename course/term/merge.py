"""A grading group's results into the class gradebook: one transaction per student, and
no hand grade lost.

``make grade`` grades each group of students in a throwaway course with a gradebook of
its own (:mod:`course.term.classgrade`); :func:`merge_student` copies one student's
autograded scores and comments from there into the class gradebook. It promises:

- **One commit per student.** The submission, its grades and comments, the answers'
  fingerprints and the regrade log are written in one transaction (nbgrader's own
  ``add_submission`` commits as it goes; it runs here with its commits turned into
  flushes: :mod:`course.term.nbgrader_gradebook_commits`). Killed at any moment, the
  class gradebook holds each student either as before or fully merged, and merging the
  same results again changes nothing.
- **Hand grades stay.** The submission is updated in place, never removed. A manual
  score, extra credit or manual comment is kept when the answer it grades is the same
  text as when it was last merged: a written answer is its own cell; a test cell's
  hand score goes with every code answer of its notebook. The fingerprints
  (SHA-256 of each answer cell's source) live in the gradebook's own table
  ``course_answer``.
- **A changed answer waits for a person again.** Its hand grade is cleared, marked as
  needing a grade, and written to the ``course_regrade`` table with the old score
  and comment (``grades/weekN-regrades.csv`` lists them, :func:`regrade_log`).
- **Untouched written answers score 0 without a person**, as nbgrader already scores
  them (a written answer left as the release's stub has ``auto_score`` 0 and needs no
  manual grade); a changed one waits for a grader.

A gradebook made before fingerprints existed has none: its hand grades are kept (the
answers cannot be compared, and losing a grade is the worse mistake).

:func:`merge` does this for each student of a finished group, then puts their autograded
notebooks and feedback in the repository, each folder replaced whole
(:func:`replace_tree`); :func:`crashpoint` is where the crash-safety test kills it.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import warnings
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import nbformat
from sqlalchemy import Column, Float, Integer, MetaData, String, Table, Text, delete, insert, select
from sqlalchemy.exc import SAWarning

from course.term.nbgrader_gradebook_commits import one_transaction
from course.term.worker import FINISHED, finish_files

CODE = "*code*"  # the fingerprint of every code answer of a notebook, for test cells

META = MetaData()
ANSWERS = Table(
    "course_answer", META,
    Column("assignment", String(128), primary_key=True),
    Column("student", String(128), primary_key=True),
    Column("notebook", String(128), primary_key=True),
    Column("cell", String(128), primary_key=True),
    Column("digest", String(64), nullable=False),
)
REGRADES = Table(
    "course_regrade", META,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("assignment", String(128), nullable=False),
    Column("student", String(128), nullable=False),
    Column("notebook", String(128), nullable=False),
    Column("cell", String(128), nullable=False),
    Column("old_score", Float),
    Column("old_extra_credit", Float),
    Column("old_comment", Text),
    Column("logged_at", String(32), nullable=False),
)

NOTES = Table(
    "course_note", META,
    Column("assignment", String(128), primary_key=True),
    Column("student", String(128), primary_key=True),
    Column("note", Text, nullable=False),
)


def ensure_tables(gb) -> None:
    """Create the course's three tables (answer digests, the re-grade log, notes) in
    ``gb``'s database if they are missing."""
    META.create_all(gb.engine)


def answer_digests(notebook_path: Path) -> dict[str, str]:
    """``{cell name: sha256 of its source}`` for every answer cell (nbgrader solution
    cell) of a submitted notebook, plus :data:`CODE` over all its code answers."""
    nb = nbformat.read(notebook_path, as_version=4)
    found: dict[str, str] = {}
    code = hashlib.sha256()
    for cell in nb.cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if not meta.get("solution") or not meta.get("grade_id"):
            continue
        found[meta["grade_id"]] = hashlib.sha256(cell.source.encode()).hexdigest()
        if cell.cell_type == "code":
            code.update(meta["grade_id"].encode() + b"\0" + cell.source.encode() + b"\0")
    found[CODE] = code.hexdigest()
    return found


@dataclass
class Merged:
    """What :func:`merge_student` did for one student."""

    student: str
    new: bool = False  # the student had no submission in the class gradebook
    kept: list[str] = field(default_factory=list)  # "week5.ipynb reflection_1"
    regrade: list[str] = field(default_factory=list)  # hand grades set aside


def _is_answer(cell) -> bool:
    from nbgrader.api import SolutionCell

    return any(isinstance(c, SolutionCell) and c.name == cell.name
               for c in cell.notebook.solution_cells)


def merge_student(src, dst, assignment: str, student: str, folder: Path,
                  timestamp: str | None, note: str = "", late_rule=None) -> Merged:
    """Merge ``student``'s graded ``assignment`` from gradebook ``src`` into ``dst`` (module
    docstring); ``folder`` is the submission (its notebooks are fingerprinted), ``note``
    what grading noticed (the CSV's note), ``late_rule`` nbgrader's late-submission
    plugin (:func:`course.term.late.apply_penalties`, in the same transaction).
    Raises nbgrader's ``MissingEntry`` when ``src`` has no such submission."""
    from nbgrader.api import MissingEntry

    done = src.find_submission(assignment, student)
    result = Merged(student)
    with one_transaction(dst):
        dst.update_or_create_student(student)
        try:
            mine = dst.find_submission(assignment, student)
        except MissingEntry:
            with warnings.catch_warnings():  # nbgrader's own autoflush notes, harmless
                warnings.filterwarnings("ignore", category=SAWarning)
                mine = dst.add_submission(assignment, student,
                                          **({"timestamp": timestamp} if timestamp else {}))
            result.new = True
        else:
            if timestamp:
                from nbgrader.utils import parse_utc

                mine.timestamp = parse_utc(timestamp)
        before = _stored(dst, assignment, student)
        for nb in done.notebooks:
            path = Path(folder) / f"{nb.name}.ipynb"
            now = answer_digests(path) if path.is_file() else {}
            was = before.get(nb.name)
            aside: dict[str, list] = {}  # cell: [old score, old extra credit, old comment]

            def same(cell: str, was=was, now=now) -> bool:
                return was is None or was.get(cell) == now.get(cell)

            for grade in nb.grades:
                target = dst.find_grade(grade.name, nb.name, assignment, student)
                target.auto_score = grade.auto_score
                by_hand = target.manual_score is not None or target.extra_credit is not None
                if by_hand and same(grade.name if _is_answer(grade.cell) else CODE):
                    target.needs_manual_grade = False  # the same answer: the grade stands
                    result.kept.append(f"{nb.name} {grade.name}")
                    continue
                if by_hand:
                    aside[grade.name] = [target.manual_score, target.extra_credit, None]
                    result.regrade.append(f"{nb.name} {grade.name}")
                    target.manual_score = target.extra_credit = None
                target.needs_manual_grade = grade.needs_manual_grade
            for comment in nb.comments:
                target = dst.find_comment(comment.name, nb.name, assignment, student)
                target.auto_comment = comment.auto_comment
                if target.manual_comment and not same(comment.name):
                    aside.setdefault(comment.name, [None, None, None])[2] = \
                        target.manual_comment
                    target.manual_comment = None
            for cell, (score, extra, comment) in aside.items():
                _log(dst, assignment, student, nb.name, cell, score, extra, comment)
            _store(dst, assignment, student, nb.name, now)
        set_note(dst, assignment, student, note)
        if late_rule is not None:
            from course.term.late import apply_penalties

            apply_penalties(dst, assignment, late_rule, [student])
    return result


def _stored(gb, assignment: str, student: str) -> dict[str, dict[str, str]]:
    rows = gb.db.execute(select(ANSWERS.c.notebook, ANSWERS.c.cell, ANSWERS.c.digest).where(
        ANSWERS.c.assignment == assignment, ANSWERS.c.student == student))
    found: dict[str, dict[str, str]] = {}
    for notebook, cell, digest in rows:
        found.setdefault(notebook, {})[cell] = digest
    return found


def _store(gb, assignment: str, student: str, notebook: str, digests: dict[str, str]) -> None:
    gb.db.execute(delete(ANSWERS).where(
        ANSWERS.c.assignment == assignment, ANSWERS.c.student == student,
        ANSWERS.c.notebook == notebook))
    if digests:
        gb.db.execute(insert(ANSWERS), [
            {"assignment": assignment, "student": student, "notebook": notebook,
             "cell": cell, "digest": digest} for cell, digest in digests.items()])


def _log(gb, assignment: str, student: str, notebook: str, cell: str,
         score: float | None, extra: float | None, comment: str | None) -> None:
    gb.db.execute(insert(REGRADES).values(
        assignment=assignment, student=student, notebook=notebook, cell=cell,
        old_score=score, old_extra_credit=extra, old_comment=comment,
        logged_at=datetime.now(UTC).isoformat(timespec="seconds")))


def set_note(gb, assignment: str, student: str, note: str) -> None:
    """Record what grading noticed about a student's submission (does not commit)."""
    gb.db.execute(delete(NOTES).where(NOTES.c.assignment == assignment,
                                      NOTES.c.student == student))
    gb.db.execute(insert(NOTES).values(assignment=assignment, student=student, note=note))


def notes_of(gb, assignment: str) -> dict[str, str]:
    """``{student: note}`` of every student grading has seen for ``assignment``."""
    ensure_tables(gb)
    rows = gb.db.execute(select(NOTES.c.student, NOTES.c.note).where(
        NOTES.c.assignment == assignment))
    return dict(rows.all())


def regrade_log(gb, assignment: str) -> list[dict]:
    """Every hand grade or comment set aside because its answer changed, oldest first."""
    ensure_tables(gb)
    rows = gb.db.execute(select(REGRADES).where(REGRADES.c.assignment == assignment)
                         .order_by(REGRADES.c.id))
    return [dict(row._mapping) for row in rows]


# ------------------------------------------------------- a finished group, merged
def merge(course: Path, students: list[str], week: int, repo: Path, db_url: str,
          notes: dict[str, str] | None = None, late_rule=None) -> list[Merged]:
    """Merge each student of a finished group into the class gradebook
    (:func:`course.term.merge.merge_student`: one transaction per student, hand grades
    of unchanged answers kept), then put their autograded notebooks and feedback in the
    repository, each folder replaced whole (:func:`replace_tree`). A group folder whose
    worker did not run :func:`course.term.worker.finish_files` gets the submission files here."""
    from nbgrader.api import Gradebook, MissingEntry

    assignment = f"week{week}"
    merged = []
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as src, Gradebook(db_url) as dst:
        ensure_tables(dst)
        for student in students:
            folder = repo / "submitted" / student / assignment
            stamp = folder / "timestamp.txt"
            crashpoint("merge:before")
            try:
                result = merge_student(src, dst, assignment, student, folder,
                                       stamp.read_text().strip() if stamp.is_file() else None,
                                       (notes or {}).get(student, ""), late_rule)
            except MissingEntry:
                continue
            merged.append(result)
            crashpoint("merge:committed")
            if not (course / FINISHED).is_file():
                finish_files(course, week, {student: str(folder)}, mark=False)
            for name in ("autograded", "feedback"):
                source = course / name / student / assignment
                if source.is_dir():
                    replace_tree(source, repo / name / student / assignment)
                    crashpoint(f"merge:{name}")
    return merged


def replace_tree(source: Path, target: Path) -> None:
    """Replace ``target`` with a copy of ``source``, never leaving half a folder there:
    the copy is made beside it and renamed into place. Leftovers of an interrupted
    replacement (``<name>.new-*``, ``<name>.old-*``) are removed first."""
    target.parent.mkdir(parents=True, exist_ok=True)
    for kind in ("new", "old"):
        for stale in target.parent.glob(f"{target.name}.{kind}-*"):
            shutil.rmtree(stale)
    fresh = target.with_name(f"{target.name}.new-{os.getpid()}")
    shutil.copytree(source, fresh)
    old = target.with_name(f"{target.name}.old-{os.getpid()}")
    if target.exists():
        target.rename(old)
    fresh.rename(target)
    if old.exists():
        shutil.rmtree(old)


def crashpoint(name: str) -> None:
    """Kill this process here when ``COURSE_GRADE_KILL_AT`` names ``name`` (``name`` or
    ``name#n``: its n-th passage), after writing ``killed at <name>`` to the file
    ``COURSE_GRADE_KILL_TRACE``: the crash-safety test proves every kill landed."""
    wanted = os.environ.get("COURSE_GRADE_KILL_AT")
    if not wanted:
        return
    point, _, nth = wanted.partition("#")
    if point != name:
        return
    _passages[name] = _passages.get(name, 0) + 1
    if _passages[name] < int(nth or 1):
        return
    trace = os.environ.get("COURSE_GRADE_KILL_TRACE")
    if trace:
        fd = os.open(trace, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        os.write(fd, f"killed at {wanted}\n".encode())
        os.close(fd)
    os.kill(os.getpid(), signal.SIGKILL)


_passages: dict[str, int] = {}
