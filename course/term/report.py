"""What ``make grade`` says, student by student: each line starts with the student it is
about, and the CSV's note says the same in fewer words.

- :func:`describe`: a graded student's lines (score, conformed cells, flags, a dead
  kernel, cells stopped by the time limit, failed tests, what the sandbox blocked or
  the kernel rewired) and their note; a blocked attempt's own text is counted, never
  copied into the note;
- :func:`unreadable_note`: what to do about a notebook that is not valid JSON;
- :func:`warn_strangers`: submitters the class list does not name (graded all the same);
- :class:`Progress`: the one-line progress bar on stderr.
"""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path

from course.grader.autograde import UnreadableNotebook
from course.grader.verdict import one_line
from course.sandbox.limits import is_breach
from course.term.grades import HELD, roster_ids


class Progress:
    """A one-line progress bar on stderr, redrawn as students finish."""

    def __init__(self, total: int, week: int):
        self.total, self.done, self.week, self.start = total, 0, week, time.monotonic()

    def step(self, student: str) -> None:
        self.done += 1
        filled = round(20 * self.done / self.total)
        elapsed = time.monotonic() - self.start
        sys.stderr.write(f"\rweek{self.week} [{'#' * filled}{'.' * (20 - filled)}] "
                         f"{self.done}/{self.total} {elapsed:5.0f} s  last: {student:<20}")
        if self.done == self.total:
            sys.stderr.write("\n")
        sys.stderr.flush()


def unreadable_note(student: str, week: int, error: UnreadableNotebook, repo: Path) -> str:
    """What the instructor reads about a submission whose notebook is not valid JSON."""
    try:
        where = error.path.resolve().relative_to(Path(repo).resolve())
    except ValueError:
        where = error.path
    return (f"{where} is not a readable notebook ({error.detail}); ask {student} for a "
            f"readable copy (their last checkpoint or their git history), put it in "
            f"submitted/{student}/week{week}/ and run `make grade WEEK={week} "
            f"STUDENT={student}`")


def warn_strangers(students: list[str], repo: Path, url: str) -> list[str]:
    """The submitters the class list does not name, each warned about on stdout (graded
    all the same: the id may be a typo, or a late addition to the class)."""
    known = roster_ids(repo, url)
    if not known:
        print("WARNING: there is no class list in the gradebook (make roster "
              "FILE=students.csv): the CSV's rows will have no names", flush=True)
        return []
    strangers = [s for s in students if s not in known]
    for student in strangers:
        print(f"{student}: WARNING: not on the class list (make roster): graded, but "
              f"the CSV has no name for {student}; check the id, or add them to the "
              "roster", flush=True)
    return strangers


def describe(student: str, report: dict | None, blocked: list[str],
              ) -> tuple[list[str], str]:
    """The student's result lines (each starting with their name) and the CSV note."""
    if report is None:
        return [f"{student}: no result (the notebook was not graded)"], "no result"
    notes = list(report.get("conformed", []))
    lines = [f"{student}: {report['summary']} autograded"]
    lines += [f"{student}: {line}" for line in notes]
    if report.get("flags"):
        lines += [f"{student}: FLAGGED for a person: {line}" for line in report["flags"]]
        notes.insert(0, f"{HELD}: " + " | ".join(report["flags"]))
    if report["kernel_died"]:
        notes.append("kernel died")
        lines.append(f"{student}: the kernel died while grading (os._exit, a killed process "
                     "or out of memory); nothing after that could be scored")
    lines += [f"{student}: stopped by the time limit: {where}" for where in report["stopped"]]
    if report["stopped"]:
        notes.append(f"{len(report['stopped'])} cell(s) stopped by the time limit")
    lines += [f"{student}: failed {grade_id}: {one_line(message, 160)}"
              for grade_id, message in report["failed"]]
    mine = list(dict.fromkeys(one_line(line, 1000) for line in blocked
                              if line.startswith(f"{student}: ")))
    lines += mine
    # what each line is, from the grader's own words at its start (the rest of a blocked
    # attempt's line is the kernel's: it is counted, never copied into the note)
    stopped = [line for line in mine if line.startswith(f"{student}: sandbox blocked: ")]
    rewired = [line for line in mine if line.startswith(f"{student}: rewired the kernel's ")]
    delegated = [line for line in mine if re.match(
        rf"{re.escape(student)}: exercise \d+ calls the course's reference ", line)]
    limited = [line for line in mine if is_breach(line)
               and line not in (*stopped, *rewired, *delegated)]
    notes += [line.split(": ", 1)[1] for line in limited]
    if stopped:
        notes.append(f"sandbox blocked {len(stopped)} attempt(s)")
    if rewired:
        notes.append("rewired the kernel's hooks (put back before each test)")
    if delegated:
        notes.append("called the course's reference implementation (" + ", ".join(
            line.split(": ", 1)[1].split(" calls ")[0] for line in delegated) + ")")
    if len(stopped) + len(rewired) + len(delegated) + len(limited) < len(mine):
        notes.append("test cells edited or deleted (put back)")
    return lines, "; ".join(notes)
