"""``make grade WEEK=N``: grade a whole class in parallel, sandboxed, into one gradebook.

Design (why it is safe with the gradebook): nbgrader grades serially and its SQLite
gradebook takes one writer. So the class is split into ``workers`` groups; each
group is graded by nbgrader's own ``autograde`` + ``generate_feedback`` in its OWN
throwaway course folder (its own gradebook, built from the same ``solutions/weekN``)
in a separate process. Only this process writes the repository's gradebook: it
copies each student's scores and comments in (:func:`merge`), one transaction per
student, from each group as soon as that group's worker has finished (while the
others still grade). The repository's gradebook (SQLite by default, Postgres with
``--db-url``) is therefore touched by one writer, and a crash mid-grading leaves each
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
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from course.grader.autograde import GradingError, UnreadableNotebook, check_request
from course.grader.speedups import throwaway_gradebook
from course.grader.verdict import one_line
from course.sandbox.jail import availability
from course.sandbox.limits import is_breach
from course.term import late
from course.term.instructor import (
    GRADES_DIR,
    STRANGER,
    canvas_path,
    course_config,
    db_url_of,
    ensure_registered,
    export,
    roster_ids,
    run_converter,
    tools_on_path,
)
from course.term.merge import Merged, ensure_tables, merge_student, set_note

WORKER = """
import json, sys
from pathlib import Path
from course.term.classgrade import grade_group
grade_group(json.loads(sys.argv[1]))
"""


FINISHED = ".files-finished"  # in a group's course folder: finish_files has run


def submissions(week: int, repo: Path) -> dict[str, Path]:
    """``{student: folder}`` for every ``submitted/<student>/weekN/``."""
    return {p.parent.name: p for p in sorted((Path(repo) / "submitted").glob(f"*/week{week}"))
            if p.is_dir()}


def split(students: list[str], groups: int) -> list[list[str]]:
    """Round-robin groups (no empty ones)."""
    groups = max(1, min(groups, len(students)))
    return [students[i::groups] for i in range(groups)]


def grade_group(job: dict) -> None:
    """In a worker process: autograde + feedback for one group in its own course folder,
    then write ``reports.json`` next to it."""
    from course.grader.autograde import grade

    tools_on_path()
    course = Path(job["course"])
    reports = grade(job["week"], {s: Path(f) for s, f in job["folders"].items()},
                    repo=Path(job["repo"]), keep=course, timeout_s=job.get("timeout_s"))
    config = course_config(Path(job["repo"]))
    config.CourseDirectory.root = str(course)
    config.CourseDirectory.db_url = f"sqlite:///{course / 'gradebook.db'}"
    with throwaway_gradebook(course):
        run_converter("generate_feedback", config, f"week{job['week']}")
    finish_files(course, job["week"], job["folders"])
    (course.parent / "reports.json").write_text(json.dumps({
        name: {"summary": r.summary(), "earned": r.earned, "total": r.total,
               "kernel_died": r.kernel_died, "stopped": r.stopped, "conformed": r.conformed,
               "flags": r.flags,
               "failed": [[t.grade_id, t.message] for t in r.failed()]}
        for name, r in reports.items()}))


def finish_files(course: Path, week: int, folders: dict[str, str], mark: bool = True) -> None:
    """In the worker, once feedback is made: each submission's own files next to its
    autograded notebook and its feedback, so that :func:`merge` (serial, in the main
    process) only copies folders. (The rubric cells are already in the autograded
    notebooks: :class:`course.term.rubric.AddRubric` is an autograde step.)"""
    assignment = f"week{week}"
    for student, folder in folders.items():
        _copy_submission_files(Path(folder), [course / name / student / assignment
                                              for name in ("autograded", "feedback")])
    if mark:
        (course / FINISHED).touch()


def merge(course: Path, students: list[str], week: int, repo: Path, db_url: str,
          notes: dict[str, str] | None = None, late_rule=None) -> list[Merged]:
    """Merge each student of a finished group into the class gradebook
    (:func:`course.term.merge.merge_student`: one transaction per student, hand grades
    of unchanged answers kept), then put their autograded notebooks and feedback in the
    repository, each folder replaced whole (:func:`replace_tree`). A group folder whose
    worker did not run :func:`finish_files` gets the submission files here."""
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


def _copy_submission_files(submitted: Path, targets: list[Path]) -> None:
    """Put the submission's own files (``timestamp.txt``, nbgrader's ``submission_secret.txt``)
    next to its autograded notebook and its feedback, as nbgrader's autograde does:
    ``release_feedback`` needs them."""
    for name in ("timestamp.txt", "submission_secret.txt"):
        for target in targets:
            if (submitted / name).is_file() and target.is_dir():
                shutil.copy2(submitted / name, target / name)


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
    strangers = _strangers(sorted(everyone), repo, url)
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
                lines, notes[student] = _describe(student, reports.get(student), blocked)
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
    held = sorted(s for s, note in notes.items() if note.startswith("HELD FOR A PERSON"))
    if held:
        print(f"make grade: {len(held)} row(s) held for a person (the static flagger found "
              f"code that reaches into the grading machinery; read their notes in "
              f"{GRADES_DIR}/week{week}.csv): {', '.join(held)}", file=sys.stderr, flush=True)
    if failed_rows:
        print(f"make grade: {len(failed_rows)} row(s) could not be graded: "
              f"{', '.join(sorted(failed_rows))} (see their notes in "
              f"{GRADES_DIR}/week{week}.csv)", file=sys.stderr, flush=True)
    return 0 if gradable and not failed_rows else 2


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


def _strangers(students: list[str], repo: Path, url: str) -> list[str]:
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


def _describe(student: str, report: dict | None, blocked: list[str],
              ) -> tuple[list[str], str]:
    """The student's result lines (each starting with their name) and the CSV note."""
    if report is None:
        return [f"{student}: no result (the notebook was not graded)"], "no result"
    notes = list(report.get("conformed", []))
    lines = [f"{student}: {report['summary']} autograded"]
    lines += [f"{student}: {line}" for line in notes]
    if report.get("flags"):
        lines += [f"{student}: FLAGGED for a person: {line}" for line in report["flags"]]
        notes.insert(0, "HELD FOR A PERSON: " + " | ".join(report["flags"]))
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
