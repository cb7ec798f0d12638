"""Late work in nbgrader's own terms: a week's due date, and the penalty it costs.

- A week's due date is nbgrader's ``Assignment.duedate`` in the class gradebook
  (:func:`set_due`, ``make due WEEK=5 DUE='2026-12-10 17:00 UTC'``); a student's
  extension is nbgrader's too (``Gradebook.grant_extension``). A submission's time is the
  ``timestamp.txt`` nbgrader writes at submit.
- The penalty is nbgrader's late-submission plugin, whichever ``AssignLatePenalties.
  plugin_class`` names (``nbgrader_config.py``). The course's :class:`PercentPerDay`
  takes ``percent_per_day`` of the notebook's score for every started day late (0, the
  default, falls back to nbgrader's own ``penalty_method``: ``none`` or ``zero``).
- :func:`apply_penalties` computes each late notebook's penalty from its *current*
  score, hand grades included, and stores it in nbgrader's
  ``SubmittedNotebook.late_submission_penalty`` (what the formgrader and the feedback
  show). ``make grade``, ``make feedback`` and ``make export`` call it, so a penalty
  follows the hand grades entered after autograding instead of freezing the score
  autograde saw. It never commits: the caller's transaction does.
"""

from __future__ import annotations

import math
from datetime import datetime

from nbgrader.plugins import LateSubmissionPlugin
from traitlets import Float


class PercentPerDay(LateSubmissionPlugin):
    """``percent_per_day`` of the score per started day late, at most the whole score."""

    percent_per_day = Float(
        0.0, help="percent of the notebook's score taken per started day late "
                  "(0: nbgrader's penalty_method decides)").tag(config=True)

    def late_submission_penalty(self, student_id: str, score: float,
                                total_seconds_late: float) -> float | None:
        if self.percent_per_day <= 0:
            return super().late_submission_penalty(student_id, score, total_seconds_late)
        days = math.ceil(total_seconds_late / 86400)
        return round(score * min(1.0, days * self.percent_per_day / 100), 4)


def plugin(config) -> LateSubmissionPlugin:
    """The late-submission plugin ``config`` (a traitlets config) names."""
    from nbgrader.preprocessors import AssignLatePenalties

    step = AssignLatePenalties(config=config)
    step.init_plugin()
    return step.plugin_inst


def notebook_score(notebook) -> float:
    """A submitted notebook's score as nbgrader counts it (a hand grade wins over the
    autograder's, extra credit added), from the rows in this session, flushed or not."""
    total = 0.0
    for grade in notebook.grades:
        score = grade.manual_score if grade.manual_score is not None else grade.auto_score
        total += (score or 0.0) + (grade.extra_credit or 0.0)
    return total


def apply_penalties(gb, assignment: str, rule: LateSubmissionPlugin,
                    students: list[str] | None = None) -> dict[str, float]:
    """Set every late notebook's ``late_submission_penalty`` (None when on time) for the
    submissions of ``assignment`` (only ``students``' when given); ``{student: penalty}``
    for the late ones. Does not commit."""
    late = {}
    for submission in gb.assignment_submissions(assignment):
        if students is not None and submission.student_id not in students:
            continue
        seconds = submission.total_seconds_late
        penalty = 0.0
        for notebook in submission.notebooks:
            notebook.late_submission_penalty = None
            if seconds > 0:
                score = notebook_score(notebook)
                value = rule.late_submission_penalty(submission.student_id, score, seconds)
                if value is not None:
                    notebook.late_submission_penalty = max(0.0, min(float(value), score))
                    penalty += notebook.late_submission_penalty
        if seconds > 0:
            late[submission.student_id] = penalty
    return late


def parse_due(text: str) -> datetime:
    """A due date as nbgrader reads one (``2026-12-10 17:00 UTC``, ISO 8601, a zone or
    UTC); ValueError with the text when it is not a date."""
    from nbgrader.utils import parse_utc

    try:
        return parse_utc(text)
    except (ValueError, OverflowError, TypeError) as error:
        raise ValueError(f"{text!r} is not a date (try '2026-12-10 17:00 UTC')") from error


def set_due(gb, assignment: str, text: str) -> datetime:
    """Record ``assignment``'s due date in the gradebook (committed); the parsed date."""
    due = parse_due(text)
    gb.update_or_create_assignment(assignment, duedate=due)
    return due
