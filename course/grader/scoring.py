"""nbgrader's gradebook and executed notebook read into a :class:`~course.grader.report.Report`.

It promises:

- every score is read back from nbgrader's gradebook (:func:`gradebook_scores`), so
  nbgrader's rules hold as they are: an error or anything written to stderr scores 0, a
  number as the cell's result is partial credit;
- :func:`read_report` gives one :class:`~course.grader.report.CellResult` per test cell
  the declaration lists, in the notebook's order, with what went wrong in one line
  (:func:`cell_outcomes`): the answer cell's error when the answer cell raised (that is the
  cause), the time limit when it stopped the cell, partial credit when that is all;
- a notebook nbgrader did not produce is ``missing``, its tests scoring 0.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat

from course.grader.report import CellResult, Report, num
from course.grader.verdict import NOT_DONE, failure, in_cell
from course.grader.week import Week

TIMEOUT_ERROR = "CellTimeoutError"

Scores = dict[str, dict[tuple[str, str], float]]  # student → (notebook, grade id) → score


def gradebook_scores(db_url: str, assignment: str) -> Scores:
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


def read_report(course: Path, week: Week, student: str, folder: Path, notebooks: list[str],
            timeout_s: float, scores: dict[tuple[str, str], float]) -> Report:
    report = Report(week.number, student, folder, timeout_s=timeout_s)
    for name in notebooks:  # a week has one notebook, weekN.ipynb (declaration.Week)
        graded_path = course / "autograded" / student / f"week{week.number}" / name
        graded = nbformat.read(graded_path, as_version=4) if graded_path.is_file() else None
        if graded is None:
            report.missing.append(name)
        outcomes, stopped = cell_outcomes(graded) if graded else ({}, [])
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
                message = (f"partial credit: the cell's result gave {num(earned)} of "
                           f"{num(points)}")
            report.tests.append(CellResult(
                grade_id, exercise.label, points, earned, message, timed_out,
                "hidden test" if grade_id in exercise.hidden else "visible test"))
        report.written += [(w.id, week.written_label(w), w.points) for w in week.written]
    return report


def cell_outcomes(graded) -> tuple[dict[str, tuple[str, bool]], list[str]]:
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
