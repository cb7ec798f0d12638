"""A red team kept as tests: one ``make grade`` of week 5 with two workers, three honest
full solutions beside accidents and attacks on the test guard (issue 43).

Every honest row must score the full 57 with an empty note, whatever the notebooks
graded in the same worker group did; each accident ends on its own row with a note
saying what was put right; each attacker scores at most the blank release's score or
carries a flag that names what it did.
"""

from __future__ import annotations

import copy
import csv
import os
import subprocess
import sys

import nbformat
import pytest
from classroom_fixtures import RELEASE, SOURCE, _by_id, _nb, _submit, build_course
from weeks import REPO, autograded_points

FULL = int(autograded_points(REPO / "solutions" / "week5" / "week5.ipynb"))
HONEST = ("h_ann", "h_ben", "h_cat")

pytestmark = pytest.mark.slow


def _accidents(course) -> dict[str, str]:
    """Notebooks that stopped nbgrader for their whole worker group before issue 43."""
    students = {}
    marked = _nb(RELEASE)
    marked.cells[_by_id(marked, "ex1_shape")].metadata.nbgrader["solution"] = True
    _submit(course, "x_marked", marked)
    students["x_marked"] = "a test cell marked as an answer"
    duplicated = _nb(SOURCE)
    at = _by_id(duplicated, "ex2_keys_never_collide")
    duplicated.cells.insert(at + 1, copy.deepcopy(duplicated.cells[at]))
    duplicated.cells[at + 1]["id"] = "a-copy"
    _submit(course, "x_dup", duplicated)
    students["x_dup"] = "the solution with a graded cell pasted twice"
    added = _nb(RELEASE)
    added.cells.append(nbformat.v4.new_code_cell("assert True", metadata={"nbgrader": {
        "grade": True, "grade_id": "my_own_points", "locked": False, "points": 50,
        "schema_version": 3, "solution": False, "task": False}}))
    _submit(course, "x_added", added)
    students["x_added"] = "a graded cell of its own, worth 50 points"
    return students


def build_red_team(course) -> dict[str, str]:
    students = {}
    for name in HONEST:
        _submit(course, name, _nb(SOURCE))
        students[name] = "the solution"
    students.update(_accidents(course))
    return students


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    course = build_course(tmp_path_factory.mktemp("redteam") / "course")
    students = build_red_team(course)
    env = {**os.environ, "COURSE_NOTEBOOK_BUDGET": "60"}
    done = subprocess.run(
        [sys.executable, "-m", "course.grading.instructor", "grade", "--week", "5",
         "--workers", "2", "--timeout", "20", "--repo", str(course)],
        capture_output=True, text=True, env=env, timeout=1500)
    with open(course / "grades" / "week5.csv") as f:
        rows = {row["student"]: row for row in csv.DictReader(f)}
    return course, students, done, rows


def test_honest_rows_score_full_marks_with_no_note(graded):
    _, students, done, rows = graded
    assert set(rows) == set(students), done.stdout[-3000:]
    for name in HONEST:
        assert float(rows[name]["autograded"]) == FULL, (name, rows[name], done.stdout[-3000:])
        assert rows[name]["note"] == "", (name, rows[name]["note"])


def test_each_accident_ends_on_its_own_row(graded):
    _, _, done, rows = graded
    assert float(rows["x_dup"]["autograded"]) == FULL, rows["x_dup"]
    assert "duplicated graded cell(s) ex2_keys_never_collide" in rows["x_dup"]["note"]
    assert float(rows["x_marked"]["autograded"]) == 0, rows["x_marked"]
    assert "put back as released" in rows["x_marked"]["note"]
    assert "ex1_shape" in rows["x_marked"]["note"]
    assert float(rows["x_added"]["autograded"]) == 0, rows["x_added"]
    assert rows["x_added"]["autograded_max"] == str(FULL)
    assert "the release does not have" in rows["x_added"]["note"]
    assert "GRADING FAILED" not in done.stdout, done.stdout[-3000:]


def test_a_notebook_that_still_stops_nbgrader_fails_its_own_row_only(tmp_path):
    """Whatever else stops nbgrader (here: the accident of a test cell marked as an answer,
    with :mod:`course.grading.conform` switched off in the workers, as before issue 43):
    the group is graded again one student at a time; the honest classmate keeps the full
    score, and ``make grade`` exits 2 naming the failed row."""
    course = build_course(tmp_path / "course")
    _submit(course, "h_ann", _nb(SOURCE))
    marked = _nb(RELEASE)
    marked.cells[_by_id(marked, "ex1_shape")].metadata.nbgrader["solution"] = True
    _submit(course, "x_marked", marked)
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(
        "import course.grading.conform as _c\n_c.conform = lambda nb, source: []\n")
    env = {**os.environ, "PYTHONPATH": str(hook)}
    done = subprocess.run(
        [sys.executable, "-m", "course.grading.instructor", "grade", "--week", "5",
         "--workers", "1", "--timeout", "20", "--repo", str(course), "--sandbox", "off"],
        capture_output=True, text=True, env=env, timeout=900)
    with open(course / "grades" / "week5.csv") as f:
        rows = {row["student"]: row for row in csv.DictReader(f)}
    assert done.returncode == 2, done.stdout[-2000:] + done.stderr[-2000:]
    assert float(rows["h_ann"]["autograded"]) == FULL, rows["h_ann"]
    assert rows["h_ann"]["note"] == ""
    assert rows["x_marked"]["note"].startswith("grading failed: nbgrader stopped on this "
                                               "notebook"), rows["x_marked"]
    assert "x_marked: GRADING FAILED" in done.stdout
    assert "h_ann: GRADING FAILED" not in done.stdout
    assert "could not be graded: x_marked " in done.stderr, done.stderr[-2000:]
