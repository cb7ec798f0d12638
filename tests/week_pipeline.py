"""One week's grading run, shared by its checks (the ``pipeline`` fixture).

:func:`grade_week` runs ``make check WEEK=N`` on the untouched release in a background
process, and the forked checks (:mod:`forked_answers`: one run of the solution forks its
kernel before each exercise, each child runs one answer and that exercise's tests), while
ONE nbgrader run (:func:`course.grader.autograde.grade`) grades the solution and the
wrong answers nbgrader grades (:func:`week_answers.bundles` or :func:`week_answers.apart`),
keeping its course folder. What it leaves is a :class:`Pipeline`.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from week_answers import apart, bundles, delegations
from weeks import (
    CELL_TIMEOUT_S,
    RUN_PROBE,
    cells,
    finish,
    graded,
    nbgrader_state_in_repo,
    start,
    start_make_check,
    submission,
)

from course.grader.known_answers import answers
from course.grader.week import Answer, Week


def start_probe(week: Week, forked: Mapping[str, Answer], root: Path) -> subprocess.Popen:
    """The solution run once in a kernel that forks at each exercise to check ``forked``
    (:mod:`forked_answers`), in the background; verdicts in ``root/verdicts``."""
    from forked_answers import probe_notebook

    by_exercise: dict[int, dict[str, dict[str, str]]] = defaultdict(dict)
    for name, answer in forked.items():
        by_exercise[answer.exercise][name] = answer.cells
    root.mkdir(parents=True, exist_ok=True)
    probe = root / week.notebook.name
    nbformat.write(probe_notebook(week, dict(by_exercise), root / "verdicts",
                                  cell_timeout_s=CELL_TIMEOUT_S), probe)
    return start("-c", RUN_PROBE, str(probe))



@dataclass
class Grading:
    """What a week's module adds to its one grading run (``GRADING`` in ``test_weekN.py``):
    more submission folders for the nbgrader run, more background processes."""

    more_submissions: Callable[[Path], Mapping[str, Path]] | None = None
    more_jobs: Callable[[Path], Mapping[str, subprocess.Popen]] | None = None


@dataclass
class Pipeline:
    """What one week's grading run left (:func:`grade_week`)."""

    week: Week
    course: Path  # the kept nbgrader course folder
    reports: dict  # {submission: course.grader.report.Report}
    bundle_of: dict[str, str]  # {wrong-answer name: the submission that held it}
    jobs: dict[str, subprocess.CompletedProcess]  # "blank" (make check), "probe", more
    probed: Path  # the executed probe notebook
    forked: dict[str, dict] = field(default_factory=dict)  # {answer name: verdicts}

    @property
    def executed_solution(self) -> Path:
        return (self.course / "autograded" / "solution" / f"week{self.week.number}"
                / self.week.notebook.name)

    def forked_failures(self, name: str) -> dict[str, str]:
        """``{test grade_id: message}`` of the tests answer ``name`` failed in its forked
        check; every test of its exercise was run."""
        verdict = self.forked.get(name)
        assert verdict is not None, f"{name}: no forked check ran ({self.jobs['probe']})"
        assert verdict["ended"] == "finished", f"{name}: its forked check ended {verdict['ended']}"
        return {g: message for g, (passed, message) in verdict["tests"].items() if not passed}

    def messages_of(self, answer: Answer) -> list[str]:
        """What the tests ``answer`` must fail said (in its bundle, or its forked check)."""
        if answer.name not in self.bundle_of:
            return [m for g, m in self.forked_failures(answer.name).items()
                    if g in answer.fails]
        report = self.reports[self.bundle_of[answer.name]]
        return [t.message for t in report.failed() if t.grade_id in answer.fails]


def graded_by_nbgrader(week: Week, known: Mapping[str, Answer]) -> dict[str, Answer]:
    """The wrong answers nbgrader grades: the first ``bundled`` of each exercise (in name
    order), or all of them in a week without bundling."""
    wrongs = {n: a for n, a in known.items() if not a.right}
    if week.checks.bundled is None:
        return wrongs
    kept: dict[int, int] = defaultdict(int)
    graded_now = {}
    for name, wrong in wrongs.items():
        kept[wrong.exercise] += 1
        if kept[wrong.exercise] <= week.checks.bundled:
            graded_now[name] = wrong
    return graded_now


def right_graded_by_nbgrader(week: Week, known: Mapping[str, Answer]) -> dict[str, Answer]:
    """The right answers nbgrader grades, each in a notebook of its own: every one in a
    week without bundling (where nothing is forked); none elsewhere (forked there)."""
    if week.checks.bundled is not None:
        return {}
    return {n: a for n, a in known.items() if a.right}


def forked_answers(week: Week, known: Mapping[str, Answer]) -> dict[str, Answer]:
    """The answers checked by forking: in a bundling week every known answer, and in every
    week each exercise's automatic delegations."""
    forked = dict(known) if week.checks.bundled is not None else {}
    return {**forked, **delegations(week)}


def grade_week(week: Week, root: Path, grading: Grading | None = None) -> Pipeline:
    """``make check WEEK=N`` on the untouched release (and ``grading.more_jobs``) in the
    background, with the forked checks; meanwhile ONE nbgrader run here grades the solution,
    the wrong answers nbgrader grades (in :func:`bundles`, or :func:`apart`) and
    ``grading.more_submissions``, keeping its course folder under ``root/course``."""
    from course.grader import autograde as grading_run

    grading = grading or Grading()
    known = answers(week)
    wrongs = graded_by_nbgrader(week, known)
    rights = right_graded_by_nbgrader(week, known)
    groups = apart(wrongs) if week.checks.cross_exercise else bundles(wrongs)
    groups.update({f"right-{name}": [name] for name in rights})
    graded = {**wrongs, **rights}
    folders, bundle_of = {}, {}
    for bundle, names in groups.items():
        edits: dict[str, str] = {}
        for name in names:
            assert not set(edits) & set(graded[name].cells), f"{bundle}: two answers share a cell"
            edits.update(graded[name].cells)
            bundle_of[name] = bundle
        folders[bundle] = submission(week.notebook, root / "wrong" / bundle, edits)
    before = nbgrader_state_in_repo()
    jobs = {"blank": start_make_check(week.number),
            **(grading.more_jobs(root) if grading.more_jobs else {}),
            "probe": start_probe(week, forked_answers(week, known), root / "probe")}
    more = grading.more_submissions(root) if grading.more_submissions else {}
    try:
        reports = grading_run.grade(week.number, {"solution": week.folder, **folders, **more},
                                    keep=root / "course")
    finally:
        done = finish(jobs, week.checks.timeout_s)
    assert nbgrader_state_in_repo() == before, "grading wrote nbgrader files into the repo"
    verdicts = root / "probe" / "verdicts"
    return Pipeline(week, root / "course", reports, bundle_of, done,
                    root / "probe" / week.notebook.name,
                    {p.stem: json.loads(p.read_text()) for p in sorted(verdicts.glob("*.json"))})


# ------------------------------------------------------------------ checks of the notebooks
def nbgrader_metadata_problems(week: Week) -> list[str]:
    """What is wrong with the source notebook's nbgrader metadata (empty: nothing): graded
    cells schema 3 with points, tests locked and answers open, unique grade ids."""
    problems = []
    for grade_id, meta in graded(week.notebook).items():
        if meta["schema_version"] != 3 or not meta["points"] > 0:
            problems.append(f"{grade_id}: not schema 3 or no points")
        if meta["locked"] == meta["solution"]:
            problems.append(f"{grade_id}: a test must be locked, an answer open")
    ids = [c.metadata["nbgrader"]["grade_id"] for c in cells(week.notebook)
           if "nbgrader" in c.metadata]
    if len(ids) != len(set(ids)):
        problems.append("grade ids must be unique")
    return problems


def release_leaks(week: Week, release: Path) -> list[str]:
    """What the release gives away or lacks (empty: nothing): solution and hidden-test
    markers, the declared secrets; the same graded cells as the source; every code answer
    cell blanked with ``raise NotImplementedError()``."""
    text = "\n".join(c.source for c in cells(release))  # as written, not JSON-escaped
    problems = [s for s in ["BEGIN SOLUTION", "BEGIN HIDDEN TESTS", *week.secrets] if s in text]
    if graded(release).keys() != graded(week.notebook).keys():
        problems.append("the release's graded cells differ from the source's")
    answer_cells = {g for e in week.exercises for g in e.answers}
    for cell in cells(release):
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if (grade_id in answer_cells) != ("raise NotImplementedError()" in cell.source):
            problems.append(f"{grade_id or cell.source[:40]}: blanked only if an answer cell")
    return problems


def sameish(message: str) -> str:
    """A test's message with what differs from run to run (ids, times) left out."""
    message = re.sub(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", "<id>",
                     message)
    message = re.sub(r"\b\d+\.py\b", "<cell>.py", message)  # a kernel's name for a cell
    return re.sub(r"\d+\.\d+ ?s\b", "<time>", message)


def assert_says_why(week: Week, name: str, failed: Mapping[str, str]) -> None:
    """Each failure says why: more than a bare ``AssertionError`` (except the week's
    ``bare`` test cells), and no hidden test code."""
    for grade_id, message in failed.items():
        assert message.strip(), f"{name}: {grade_id} failed without saying why"
        assert message.strip() != "AssertionError" or grade_id in week.checks.bare, (
            f"{name}: {grade_id} says only {message!r}")
        assert "BEGIN HIDDEN TESTS" not in message and "_problems" not in message, message
