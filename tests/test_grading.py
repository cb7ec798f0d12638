"""Grading scores are nbgrader's own, read from its gradebook: a failing test cell loses
its points, partial credit counts, a test that writes to stderr scores 0.

One tiny course (one notebook, one kernel, one nbgrader run) keeps this in the fast tests.
"""

from __future__ import annotations

import shutil

import nbformat
import pytest
from weeks import nbgrader_cell, tiny_course

from course.grader.autograde import grade

WRITTEN = nbformat.v4.new_markdown_cell("Because it is.")
WRITTEN.metadata["nbgrader"] = {"schema_version": 3, "task": False, "locked": False,
                                "grade": True, "solution": True, "points": 2, "grade_id": "why"}
CELLS = [
    nbformat.v4.new_markdown_cell("# Week 8 — tiny\n\n## Exercise 1 — the answer (10 points)"),
    nbgrader_cell("def answer():\n    ### BEGIN SOLUTION\n    return 42\n    ### END SOLUTION",
                  solution=True, grade_id="answer"),
    nbgrader_cell("# Exercise 1, hidden test\n### BEGIN HIDDEN TESTS\nassert answer() == 42\n"
                  "### END HIDDEN TESTS", grade=True, locked=True, points=2, grade_id="passes"),
    nbgrader_cell("assert answer() == 41, 'answer() is not 41'", grade=True, locked=True,
                  points=3, grade_id="fails"),
    nbgrader_cell("1.5  # nbgrader reads a number as the cell's result as partial credit",
                  grade=True, locked=True, points=4, grade_id="partial"),
    nbgrader_cell("import sys\nprint('careful: deprecated', file=sys.stderr)", grade=True,
                  locked=True, points=1, grade_id="stderr"),
    WRITTEN,
]


DECLARATION = """
title = "tiny"
gains = "nothing"

[[exercises]]
number = 1
title = "the answer"
points = 10
answers = ["answer"]
visible = ["fails", "partial", "stderr"]
hidden = ["passes"]

[[written]]
id = "why"
points = 2
"""


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    root = tiny_course(tmp_path_factory.mktemp("tiny"), 8, CELLS, DECLARATION)
    submission = root / "student"
    submission.mkdir()
    shutil.copy(root / "solutions" / "week8" / "week8.ipynb", submission)
    return grade(8, {"student": submission}, repo=root)["student"]


def test_each_cell_scores_what_nbgrader_gave_it(report):
    earned = {t.grade_id: t.earned for t in report.tests}
    assert earned == {"passes": 2.0, "fails": 0.0, "partial": 1.5, "stderr": 0.0}
    assert (report.earned, report.total) == (3.5, 10.0)
    assert report.summary() == "week8: 3.5/10"


def test_the_report_says_why_points_were_lost(report):
    said = {t.grade_id: t.message for t in report.failed()}
    assert said["fails"] == "AssertionError: answer() is not 41"
    assert said["partial"] == "partial credit: the cell's result gave 1.5 of 4"
    assert said["stderr"].startswith("the test wrote to stderr, which nbgrader scores 0")
    assert "passes" not in said


def test_each_row_names_its_test_and_shows_only_that_tests_points(report):
    """Not "ok 2/2 Exercise 1 — the answer (10 points)": the exercise's total next to the
    test's own points reads as a contradiction."""
    rows = [line for line in report.lines() if line.startswith(("  ok", "  FAIL", "  TIME"))]
    assert len(rows) == 4 and not [row for row in rows if "points" in row], rows
    assert rows[0].split() == ["ok", "2/2", "hidden", "test", "of", "Exercise", "1", "—", "the",
                               "answer", "[passes]"]
    assert "visible test of Exercise 1 — the answer  [fails]" in rows[1]
    assert "  - visible test of Exercise 1 — the answer [fails]" in report.lines()


def test_the_report_says_who_grades_the_written_answers(report):
    """Only nbgrader's autograded tests count in the last line; the written answers are
    graded by the instructor, or by a self-learner against ``rubrics/weekN.md`` (which a
    tiny week 8 has not: then the model answers in ``solutions/``)."""
    from course.grader.autograde import REPO
    from course.grader.report import Report

    said = "\n".join(report.lines())
    assert "Written answers (1 cell, 2 points) are not in the total below" in said
    assert "In a class your instructor grades them" in said
    assert "compare them with the model answers in solutions/week8/" in said
    assert (REPO / "rubrics" / "week3.md").is_file()
    assert Report(week=3, student="s", submission=REPO / "week3").rubric().startswith(
        "rubrics/week3.md has a model answer for each")


def test_the_report_tells_how_to_grade_the_same_folder_again(tmp_path):
    """`make check WEEK=N` grades weekN/; any other folder needs SUBMISSION= to be graded again."""
    from course.grader.autograde import REPO
    from course.grader.report import CellResult, Report

    own = Report(week=5, student="s", submission=REPO / "week5")
    other = Report(week=5, student="s", submission=tmp_path)
    assert own.again() == "make check WEEK=5"
    assert other.again() == f"make check WEEK=5 SUBMISSION={tmp_path}"
    other.tests = [CellResult("ex1_test", "Exercise 1", 2, 0, "AssertionError: wrong key")]
    said = "\n".join(other.lines())
    assert f"make check WEEK=5 SUBMISSION={tmp_path}` again" in said
    assert "solutions/" not in said
