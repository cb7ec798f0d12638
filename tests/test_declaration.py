"""The week declarations (``solutions/weekN/week.toml``) and their one loader.

Every real week loads and agrees with its notebook; each kind of disagreement is caught
with one line naming the file; the answer files are checked the same way; the README's
table of weeks is the one the declarations make; a week folder without a declaration
stops collection, naming the missing file.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from weeks import REPO

from course.grader.consistency import reference_problems
from course.grader.declaration import declared_weeks, load, weeks_table
from course.grader.known_answers import answers, visibility_problems
from course.grader.week import DeclarationError


def test_every_week_folder_is_declared_and_agrees_with_its_notebook():
    weeks = declared_weeks()
    assert weeks == list(range(1, len(weeks) + 1)) and len(weeks) >= 7
    for number in weeks:
        week = load(number)
        assert week.total == sum(week.cell_points[g] for e in week.exercises for g in e.tests)
        assert reference_problems(week) == []
        assert answers(week), f"week {number} has no known answers"


def test_the_readme_shows_the_table_the_declarations_make():
    assert weeks_table() in (REPO / "README.md").read_text(), (
        "README.md's weeks table is stale: paste `python -m course.grader.declaration table`")


@pytest.fixture
def week_copy(tmp_path) -> Path:
    """A course folder holding a copy of week 1's source and declaration."""
    shutil.copytree(REPO / "solutions" / "week1", tmp_path / "solutions" / "week1",
                    ignore=shutil.ignore_patterns("answers"))
    return tmp_path


BREAKS = [  # (what is changed in week 1's declaration, words the error must contain)
    ('points = 6', 'points = 7', "exercise 1's tests are worth 6, not 7"),
    ('hidden = ["ex1_parse_hidden"]', 'hidden = []',
     "in the notebook but not declared: ['ex1_parse_hidden']"),
    ('visible = ["ex1_parse_visible"]', 'visible = ["ex1_parse_hidden"]',
     "ex1_parse_hidden: a visible test holding hidden tests"),
    ('hidden = ["ex1_parse_hidden"]', 'hidden = ["ex1_parse_visible"]',
     "ex1_parse_visible: a hidden test without"),
    ('title = "write `parse`"', 'title = "parse it"', "no heading 'Exercise 1 — parse it'"),
    ('title = "A graph is a plan"', 'title = "A graph"', "its first heading is not"),
    ('number = 2', 'number = 3', "exercise 3 is declared where 2 is due"),
    ('answers = ["ex2_wire"]', 'answers = ["ex1_parse"]',
     "in the notebook but not declared: ['ex2_wire']"),
    ('id = "reflection_1"\npoints = 2', 'id = "reflection_1"\npoints = 3',
     "reflection_1: not a markdown answer worth 3"),
    ('title = "A graph is a plan"', 'titel = "A graph is a plan"',
     "the field 'title' is missing"),
    ('points = 6', 'points = [6', "week.toml: "),
]


@pytest.mark.parametrize(("old", "new", "said"), BREAKS, ids=[b[2][:40] for b in BREAKS])
def test_a_declaration_that_disagrees_with_its_notebook_is_refused_in_one_line(
        week_copy, old, new, said):
    path = week_copy / "solutions" / "week1" / "week.toml"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    with pytest.raises(DeclarationError) as error:
        load(1, week_copy)
    message = str(error.value)
    assert said in message and "\n" not in message, message
    assert message.startswith("solutions/week1/week.toml"), message


def test_a_week_folder_without_a_declaration_names_the_missing_file(week_copy):
    (week_copy / "solutions" / "week1" / "week.toml").unlink()
    with pytest.raises(DeclarationError, match=r"^solutions/week1/week\.toml is missing"):
        load(1, week_copy)


def test_an_answer_must_replace_its_own_exercises_cells_and_fail_its_own_tests(week_copy):
    week = load(1, week_copy)
    folder = week_copy / "solutions" / "week1" / "answers" / "ex1_strays"
    folder.mkdir(parents=True)
    (folder / "ex2_wire.py").write_text("def wire(builder):\n    return builder\n")
    (folder / "answer.toml").write_text('exercise = 1\nfails = ["ex2_wire_hidden"]\n')
    with pytest.raises(DeclarationError) as error:
        answers(week)
    assert "not all answer cells of exercise 1" in str(error.value)
    assert "fails ['ex2_wire_hidden'], not tests of exercise 1" in str(error.value)
    (folder / "answer.toml").unlink()
    with pytest.raises(DeclarationError, match=r"answer\.toml: missing"):
        answers(week)


def test_each_exercise_needs_one_common_wrong_answer_that_fails_a_visible_test(week_copy):
    """Checked on a copy of week 1 whose marks are moved: a right answer cannot be the
    common one, two common answers or none is an error, and so is a common answer that
    fails only hidden tests (the checks the real weeks pass in tests/week_checks.py)."""
    folder = week_copy / "solutions" / "week1" / "answers"
    shutil.copytree(REPO / "solutions" / "week1" / "answers", folder)
    week = load(1, week_copy)
    known = answers(week)
    assert visibility_problems(week, known) == []
    for answer in folder.glob("*/answer.toml"):  # unmark every answer of week 1
        answer.write_text(answer.read_text().replace("common = true\n", ""))
    hidden_only = next(a for a in known.values() if a.exercise == 1 and a.fails
                       and not a.fails_visibly(week))
    path = folder / hidden_only.name / "answer.toml"
    path.write_text(path.read_text() + "common = true\n")
    problems = visibility_problems(week, answers(week))
    assert f"Exercise 1 — write `parse`: its common wrong answer {hidden_only.name} fails no " \
        "visible test" in problems
    assert any(p.startswith("Exercise 2 — wire the graph: 0 answers marked common")
               for p in problems)
    path.write_text(path.read_text().replace('fails = [', 'fails = [] # [', 1))
    with pytest.raises(DeclarationError, match="marked common but fails nothing"):
        answers(week)


def test_collecting_a_week_module_without_a_declaration_is_an_error_naming_the_file(tmp_path):
    """A week folder in ``solutions/`` without its ``week.toml`` fails collection of its
    ``tests/test_weekN.py``, in a throwaway copy of the course (files copied, not cloned:
    a learner's copy may not be a git checkout)."""
    junk = shutil.ignore_patterns("__pycache__", "*.pyc", "answers", "week.toml")
    for name in ("course", "tests", "solutions/week1"):
        shutil.copytree(REPO / name, tmp_path / name, ignore=junk)
    for name in ("pyproject.toml", "nbgrader_config.py"):
        shutil.copy2(REPO / name, tmp_path / name)
    path = [str(tmp_path), *filter(None, [os.environ.get("PYTHONPATH")])]  # the copy's first
    done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q",
                           "-p", "no:cacheprovider", "tests/test_week1.py"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(path)})
    assert done.returncode != 0
    assert "solutions/week1/week.toml is missing" in done.stdout, done.stdout[-2000:]


def test_make_check_on_a_week_without_a_declaration_says_so_in_one_line(week_copy, capsys):
    from course.grader.autograde import GradingError, grade

    (week_copy / "solutions" / "week1" / "week.toml").unlink()
    with pytest.raises(GradingError, match=r"^solutions/week1/week\.toml is missing"):
        grade(1, {"student": week_copy / "solutions" / "week1"}, repo=week_copy)
