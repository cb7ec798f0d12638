"""``make grade WEEK=N``: grade a whole class in parallel, sandboxed, into one gradebook.

Design (why it is safe with the gradebook): nbgrader grades serially and its SQLite
gradebook takes one writer. So the class is split into ``workers`` groups; each
group is graded by nbgrader's own ``autograde`` + ``generate_feedback`` in its OWN
throwaway course folder (its own gradebook, built from the same ``solutions/weekN``)
in a separate process (:mod:`course.term.worker`). Only this process writes the
repository's gradebook: it copies each student's scores and comments in
(:func:`course.term.merge.merge`), one transaction per student, from each group as soon
as that group's worker has finished (while the others still grade). The repository's
gradebook (SQLite by default, Postgres with ``--db-url``) is therefore touched by one
writer, and a crash mid-grading leaves each
student either as before or fully regraded, never half-merged.

It promises:

- every submission ``submitted/<student>/weekN/`` is graded; a folder that cannot
  be (no notebook, invalid JSON) is reported and exported with a note, not skipped
  silently, and does not stop the others; a notebook that stops nbgrader (which
  stops for every notebook of its run) is found by grading its group again one
  student at a time, and only its own row fails; the accidents nbgrader 0.9 stops on
  (a duplicated, added or re-typed graded cell) are put right before it runs
  (:mod:`course.grader.conform`), said on the row;
- each line printed names the student it is about; a progress bar on stderr;
- kernels run sandboxed wherever bubblewrap works (:mod:`course.sandbox.jail`); the blocked
  attempts are printed, prefixed with the student;
- autograded notebooks go to ``autograded/`` (with rubric cells for graders),
  feedback to ``feedback/``, the CSV to ``grades/weekN.csv``; nbgrader's chatter
  goes to ``grades/weekN-log/`` and is never mixed into the report.

This module starts the workers, waits for them and merges each group as it finishes;
what it prints about each student is :mod:`course.term.report`'s.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from course.grader.autograde import GradingError, UnreadableNotebook, check_request
from course.sandbox.jail import availability
from course.term import late
from course.term.coursedir import (
    course_config,
    db_url_of,
    ensure_registered,
    run_converter,
    tools_on_path,
)
from course.term.grades import GRADES_DIR, HELD, STRANGER, canvas_path, export
from course.term.merge import Merged, ensure_tables, merge, set_note
from course.term.report import Progress, describe, unreadable_note, warn_strangers
from course.term.worker import WORKER


def submissions(week: int, repo: Path) -> dict[str, Path]:
    """``{student: folder}`` for every ``submitted/<student>/weekN/``."""
    return {p.parent.name: p for p in sorted((Path(repo) / "submitted").glob(f"*/week{week}"))
            if p.is_dir()}


def split(students: list[str], groups: int) -> list[list[str]]:
    """Round-robin groups (no empty ones)."""
    groups = max(1, min(groups, len(students)))
    return [students[i::groups] for i in range(groups)]


def grade_class(week: int, repo: Path, *, workers: int = 0, db_url: str | None = None,
                sandbox: str = "auto", timeout_s: int | None = None,
                students: list[str] | None = None) -> int:
    """Grade every submission of ``weekN``, or only ``students``' (module docstring); 0, or
    2 when nothing could be graded or some rows could not be (named on stderr; each has
    its note in the CSV). A group whose nbgrader run stopped is graded again one student
    at a time, so one notebook's failure ends on its own row only."""
    tools_on_path()
    repo, url = Path(repo).resolve(), db_url_of(repo, db_url)
    everyone = submissions(week, repo)
    if not everyone:
        print(f"make grade: no submissions in submitted/*/week{week}/ (run `make collect "
              f"WEEK={week}` or copy each student's folder there)", file=sys.stderr)
        return 2
    unknown = sorted(set(students or []) - set(everyone))
    if unknown:
        print(f"make grade: no submission of week{week} for {', '.join(unknown)} in "
              f"submitted/ (there are: {', '.join(everyone)})", file=sys.stderr)
        return 2
    if students:
        everyone = {s: everyone[s] for s in students}
    if ensure_registered(week, repo, url):
        print(f"week{week} registered in the gradebook (it was missing or out of date)")
    config = course_config(repo, url)
    rule = late.plugin(config)
    notes, gradable = {}, {}
    strangers = warn_strangers(sorted(everyone), repo, url)
    for student, folder in everyone.items():
        try:
            check_request(week, [folder], repo=repo)
            gradable[student] = folder
            if not (folder / "timestamp.txt").is_file():
                print(f"{student}: no timestamp.txt in submitted/{student}/week{week}/ (placed "
                      "by hand?): nbgrader counts it on time; write the time it was handed in "
                      "there (2026-12-01 09:00:00 UTC) if that matters", flush=True)
        except UnreadableNotebook as error:
            notes[student] = f"not graded: {unreadable_note(student, week, error, repo)}"
            print(f"{student}: NOT GRADED: {unreadable_note(student, week, error, repo)}")
        except GradingError as error:
            notes[student] = f"not graded: {error}"
            print(f"{student}: NOT GRADED: {error}")
    env = _worker_env(sandbox)
    logs = repo / GRADES_DIR / f"week{week}-log"
    logs.mkdir(parents=True, exist_ok=True)
    groups = split(sorted(gradable), workers or os.cpu_count() or 1) if gradable else []
    print(f"grading {len(gradable)} submission(s) of week{week} with {len(groups)} worker(s); "
          f"sandbox: {env['COURSE_GRADING_SANDBOX']}", flush=True)
    failed_rows: list[str] = []
    said: list[str] = []
    merged: list[Merged] = []
    with tempfile.TemporaryDirectory(prefix=f"class-week{week}-") as tmp:
        jobs = []
        for i, group in enumerate(groups):
            place = Path(tmp) / f"group{i}"
            place.mkdir()
            job = {"week": week, "repo": str(repo), "course": str(place / "course"),
                   "folders": {s: str(gradable[s]) for s in group}, "timeout_s": timeout_s}
            log = open(logs / f"group{i}.log", "w")  # noqa: SIM115 - closed below
            genv = {**env, "COURSE_GRADING_NOTES": str(place / "notes.log")}
            jobs.append((place, group, log, subprocess.Popen(
                [sys.executable, "-c", WORKER, json.dumps(job)], cwd=repo, env=genv,
                stdout=log, stderr=subprocess.STDOUT, preexec_fn=_die_with_parent)))

        def settle(place: Path, group: list[str]) -> bool:
            """Merge a finished worker's students; False when it left no results."""
            reports = json.loads((place / "reports.json").read_text()) \
                if (place / "reports.json").is_file() else {}
            if not reports:
                return False
            blocked = (place / "notes.log").read_text().splitlines() \
                if (place / "notes.log").is_file() else []
            for student in group:
                lines, notes[student] = describe(student, reports.get(student), blocked)
                said.extend(lines)
            for student in set(group) & set(strangers):
                notes[student] = "; ".join(filter(None, [STRANGER, notes[student]]))
            merged.extend(merge(place / "course", group, week, repo, url, notes, rule))
            return True

        def merge_group(i: int) -> None:  # as soon as group i is done, while others run
            place, group, log, _job = jobs[i]
            log.close()
            if settle(place, group):
                return
            # nbgrader stopped for the whole group: grade each of its students alone, so
            # that whatever one notebook did ends on that student's row only
            for student in group if len(group) > 1 else []:
                alone = place.parent / f"group{i}-{student}"
                alone.mkdir()
                job = {"week": week, "repo": str(repo), "course": str(alone / "course"),
                       "folders": {student: str(gradable[student])}, "timeout_s": timeout_s}
                with open(logs / f"group{i}-{student}.log", "w") as own:
                    subprocess.run([sys.executable, "-c", WORKER, json.dumps(job)], cwd=repo,
                                   env={**env, "COURSE_GRADING_NOTES": str(alone / "notes.log")},
                                   stdout=own, stderr=subprocess.STDOUT,
                                   preexec_fn=_die_with_parent, check=False)
                if not settle(alone, [student]):
                    ungraded(student, Path(own.name).name)
            if len(group) == 1:
                ungraded(group[0], Path(log.name).name)

        def ungraded(student: str, log_name: str) -> None:
            failed_rows.append(student)
            notes[student] = (f"grading failed: nbgrader stopped on this notebook (see "
                              f"{GRADES_DIR}/week{week}-log/{log_name})")
            said.append(f"{student}: GRADING FAILED: nbgrader stopped on this notebook; see "
                        f"{logs.relative_to(repo)}/{log_name}")

        _wait(jobs, week, Progress(len(gradable), week) if gradable else None, merge_group)
    for line in said:
        print(line)
    _record_ungraded(week, repo, url, {
        s: "; ".join(filter(None, [STRANGER if s in strangers else "", n]))
        for s, n in notes.items() if s not in gradable or n.startswith("grading failed")})
    for line in _after_merge(week, repo, url, merged, config):
        print(line, flush=True)
    path = export(week, repo, url)
    shown = path.relative_to(repo)
    print(f"wrote {shown} and {canvas_path(shown)} (autograded points, written answers still "
          "to grade, late penalties, submission time); feedback in feedback/<student>/"
          f"week{week}/; autograded notebooks with rubrics in autograded/", flush=True)
    held = sorted(s for s, note in notes.items() if note.startswith(HELD))
    if held:
        print(f"make grade: {len(held)} row(s) held for a person (the static flagger found "
              f"code that reaches into the grading machinery; read their notes in "
              f"{GRADES_DIR}/week{week}.csv): {', '.join(held)}", file=sys.stderr, flush=True)
    if failed_rows:
        print(f"make grade: {len(failed_rows)} row(s) could not be graded: "
              f"{', '.join(sorted(failed_rows))} (see their notes in "
              f"{GRADES_DIR}/week{week}.csv)", file=sys.stderr, flush=True)
    return 0 if gradable and not failed_rows else 2


def _die_with_parent() -> None:
    """In a grading worker, before it runs: die when ``make grade`` dies (SIGKILLed, the
    worker gets SIGKILL too, instead of grading on for nobody)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def _record_ungraded(week: int, repo: Path, url: str, notes: dict[str, str]) -> None:
    """Keep the note of each submission that could not be graded (its CSV row)."""
    from nbgrader.api import Gradebook

    if not notes:
        return
    with Gradebook(url) as gb:
        ensure_tables(gb)
        for student, note in notes.items():
            set_note(gb, f"week{week}", student, note)
        gb.db.commit()


def _after_merge(week: int, repo: Path, url: str, merged: list[Merged], config) -> list[str]:
    """Lines about kept and set-aside hand grades and late penalties; the feedback of every
    student whose gradebook entry differs from what their group saw (a hand grade kept, a
    late penalty) is made again from the class gradebook."""
    from nbgrader.api import Gradebook

    lines, again = [], set()
    with Gradebook(url) as gb:
        late_students = {s.student_id: s for s in gb.assignment_submissions(f"week{week}")
                         if s.total_seconds_late > 0}
        for result in merged:
            if result.kept:
                again.add(result.student)
                lines.append(f"{result.student}: {len(result.kept)} hand grade(s) kept "
                             "(their answers did not change)")
            for cell in result.regrade:
                lines.append(f"{result.student}: {cell} changed since it was graded by hand: "
                             f"it waits for a grader again (the old grade is in "
                             f"{GRADES_DIR}/week{week}-regrades.csv)")
            late_one = late_students.get(result.student)
            if late_one is not None:
                again.add(result.student)
                hours = late_one.total_seconds_late / 3600
                lines.append(f"{result.student}: submitted {hours:.1f} h after the due date; "
                             f"late penalty {late_one.late_submission_penalty or 0:g} point(s)")
    for student in sorted(again):
        run_converter("generate_feedback", config, f"week{week}", student)
    return lines


def _worker_env(sandbox: str) -> dict[str, str]:
    env = tools_on_path(dict(os.environ))
    problem = availability()
    if sandbox == "on" and problem:
        raise GradingError(f"--sandbox on, but {problem}")
    if sandbox == "on" or (sandbox == "auto" and not problem):
        env["COURSE_GRADING_SANDBOX"] = "on"
    else:
        env["COURSE_GRADING_SANDBOX"] = "off"
        if sandbox == "auto":
            print(f"sandbox: off ({problem})", flush=True)
    return env


def _wait(jobs: list, week: int, progress: Progress | None,
          finished: Callable[[int], None]) -> None:
    """Wait for the groups, advancing the bar as autograded notebooks appear and calling
    ``finished(i)`` once for each group ``i`` whose worker has exited."""
    seen: set[str] = set()
    done: set[int] = set()
    while True:
        running = [job for *_, job in jobs if job.poll() is None]
        for place, group, _log, _job in jobs:
            for student in group:
                graded = place / "course" / "autograded" / student / f"week{week}"
                if student not in seen and graded.is_dir() and any(graded.glob("*.ipynb")):
                    seen.add(student)
                    if progress:
                        progress.step(student)
        for i, (*_, job) in enumerate(jobs):
            if i not in done and job.poll() is not None:
                done.add(i)
                try:
                    finished(i)
                except BaseException:  # no worker outlives a failed merge
                    for *_, other in jobs:
                        if other.poll() is None:
                            other.terminate()
                            other.wait()
                    raise
        if not running:
            break
        time.sleep(0.3)
    for _place, group, _log, _job in jobs:  # students whose notebook never appeared
        for student in group:
            if student not in seen and progress:
                seen.add(student)
                progress.step(student)
