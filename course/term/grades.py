"""The grades table: what the gradebook holds for a week, as the CSVs an instructor reads.

:func:`rows` reads one :class:`Row` per student from the gradebook: autograded points,
written answers (empty while they wait for a person, never a silent 0), the late
penalty, the submission time, the roster's names, and what grading noticed (the note of
:mod:`course.term.merge`); a submission that could not be graded has a row with 0
points and its note. :func:`export` writes it to ``grades/weekN.csv`` (late penalties
recomputed first, :func:`refresh_penalties`), the LMS import ``grades/weekN-canvas.csv``
(:func:`canvas_rows`) and, when a resubmission set hand grades aside,
``grades/weekN-regrades.csv``; each file is written whole or not at all.
"""

from __future__ import annotations

import csv
import os
from dataclasses import dataclass
from pathlib import Path

import nbformat

from course.grader.autograde import REPO
from course.term.coursedir import course_config, db_url_of, source_cells

GRADES_DIR = "grades"


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


HELD = "HELD FOR A PERSON"  # a note's start: the flagger named what the notebook reached for
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
    id. The score is ``total_so_far``, left empty while written answers wait for a grader,
    when the notebook could not be graded, or while the row is held for a person (the
    flagger's note: a person decides before a score reaches the students; Canvas leaves an
    empty cell alone). A
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
        done = (r.graded and r.manual_state != "not yet graded"
                and not (r.note or "").startswith(HELD))
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
