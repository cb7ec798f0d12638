"""The lab's Validate answer (course.grader.validate): short, what to do next first.

An unfinished week used to answer with every failing test's source and traceback (36,541
characters on week 5); a syntax error named the kernel's temporary file. These run the
course's validator on small nbgrader notebooks and on a real release, beside nbgrader's
own validator, which decides the same cells.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbgrader.validator import Validator
from traitlets.config import PyFileConfigLoader

from course.grader.report import CellResult, Report
from course.grader.validate import CourseValidator
from course.grader.verdict import NOT_DONE, failure, in_cell

REPO = Path(__file__).resolve().parent.parent
BLANK = "# YOUR CODE HERE\nraise NotImplementedError()"


def config():
    return PyFileConfigLoader("nbgrader_config.py", path=str(REPO)).load_config()


def cell(kind: str, source: str, grade_id: str = "", *, solution=False, grade=False):
    make = nbformat.v4.new_markdown_cell if kind == "md" else nbformat.v4.new_code_cell
    made = make(source)
    if grade_id:
        made.metadata["nbgrader"] = {
            "schema_version": 3, "grade_id": grade_id, "solution": solution, "grade": grade,
            "locked": not solution, **({"points": 2} if grade else {})}
    return made


def notebook(ex1: str, ex2: str, ex3: str) -> nbformat.NotebookNode:
    return nbformat.v4.new_notebook(cells=[
        cell("md", "# Week 9 — a small week"),
        cell("code", "x = 1"),
        cell("md", "## Exercise 1 — double it (2 points)"),
        cell("code", ex1, "ex1_answer", solution=True),
        cell("code", "assert double(2) == 4, 'double(2) should be 4'", "ex1_test", grade=True),
        cell("md", "## Exercise 2 — say hello (2 points)"),
        cell("code", ex2, "ex2_answer", solution=True),
        cell("code", "assert hello() == 'hello'", "ex2_test", grade=True),
        cell("code", "assert hello().islower()", "ex2_test_more", grade=True),
        cell("md", "## Exercise 3 — three (2 points)"),
        cell("code", ex3, "ex3_answer", solution=True),
        cell("code", "assert THREE == 3, f'THREE is {THREE}, not 3'", "ex3_test", grade=True),
    ])


def validate(tmp_path: Path, nb, validator=CourseValidator) -> dict:
    path = tmp_path / "week9.ipynb"
    nbformat.write(nb, path)
    return validator(config=config()).validate(str(path))


def test_an_unfinished_notebook_starts_with_what_to_do_next_in_a_few_lines(tmp_path):
    nb = notebook(BLANK, "def hello():\n    return 'hello'\n\nx = (\ny = 2", "THREE = 4")
    ours = validate(tmp_path, nb)
    assert len(ours["failed"]) == 1, ours
    text = ours["failed"][0]["source"]
    lines = text.splitlines()
    flat = " ".join(text.split())  # long lines are wrapped to fit the dialog
    assert text.startswith("What to do next: Exercise 1 — double it is not done yet"), text
    assert "replace `raise NotImplementedError()`" in flat.split("Then save")[0]
    assert len(lines) <= 12 and len(text) < 1000 and max(map(len, lines)) <= 88, text
    # one line per exercise that fails, the answer cell's error before the test's
    assert "  - Exercise 1 — double it: not done yet (YOUR CODE HERE)" in lines
    assert ("- Exercise 2 — say hello: its answer cell: SyntaxError: '(' was never closed "
            "(line 4 of the answer cell)") in flat
    assert "- Exercise 3 — three: AssertionError: THREE is 4, not 3" in flat
    assert "(3 exercises, 4 test cells)" in text
    assert ".py, line" not in text and "Traceback" not in text and "assert " not in text
    # nbgrader's own validator fails the same test cells, at length
    theirs = validate(tmp_path, nb, Validator)
    assert len(theirs["failed"]) == 4
    assert sum(len(f["source"]) + len(f["raw_error"]) for f in theirs["failed"]) > len(text)


def test_a_finished_notebook_gets_nbgraders_success(tmp_path):
    nb = notebook("def double(n):\n    return 2 * n", "def hello():\n    return 'hello'",
                  "THREE = 3")
    assert validate(tmp_path, nb) == {}  # nbgrader's dialog then says "Success! ..."


@pytest.mark.slow
def test_the_week_1_release_says_to_start_exercise_1(tmp_path):
    source = REPO / "week1" / "week1.ipynb"
    results = CourseValidator(config=config()).validate(str(source))
    text = results["failed"][0]["source"]
    assert text.startswith("What to do next: Exercise 1 — write `parse` is not done yet"), text
    assert len(text.splitlines()) <= 12 and len(text) < 1500, text


def test_a_syntax_error_names_the_line_of_the_cell_not_the_kernels_file():
    said = failure("SyntaxError", "invalid syntax (3058558316.py, line 7)")
    assert said == "SyntaxError: invalid syntax (line 7 of the cell)"
    assert in_cell("unexpected indent (/tmp/ipykernel_12/341325504.py, line 2)",
                   "the answer cell") == "unexpected indent (line 2 of the answer cell)"
    assert in_cell("name 'x' is not defined") == "name 'x' is not defined"


def test_make_check_says_what_to_do_next_in_the_same_words():
    report = Report(9, "you", REPO / "week9", tests=[
        CellResult("ex1_test", "Exercise 1 — double it", 2, 2),
        CellResult("ex2_test", "Exercise 2 — say hello", 2, 0,
                   "its answer cell raised SyntaxError: '(' was never closed (line 4 of the "
                   "answer cell); fix that first (the test then said: NameError: ...)"),
        CellResult("ex3_test", "Exercise 3 — three", 2, 0, NOT_DONE)])
    lines = report.lines()
    nxt = [line for line in lines if line.startswith("What to do next:")]
    assert nxt == ["What to do next: Exercise 2 — say hello: its answer cell raised "
                   "SyntaxError: '(' was never closed (line 4 of the answer cell). Fix that "
                   "cell, run it, then its test cell."], lines
    assert lines.index(nxt[0]) < lines.index("What the failing tests said:")


def test_the_student_editions_check_says_what_to_do_next_in_the_same_words(tmp_path):
    """``course.grader.selfcheck`` (the student edition's make check / make test)."""
    from course.grader.selfcheck import check

    nb = notebook("def double(n):\n    return 2 * n", "def hello(:\n    return 'hello'",
                  "THREE = 3")
    nbformat.write(nb, tmp_path / "week9.ipynb")
    lines, passed, visible = check(tmp_path / "week9.ipynb")
    assert (passed, visible) == (2, 4), lines
    assert lines[0].startswith("What to do next: Exercise 2 — say hello: its answer cell "
                               "raised SyntaxError: "), lines
    assert "(line 1 of the answer cell)" in lines[0] and ".py, line" not in "\n".join(lines)
