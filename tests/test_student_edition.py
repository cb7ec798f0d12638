"""``make student-edition DEST=dir``: no solutions, no hidden tests, and a self-check that
runs there (visible tests only)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from course.grader.autograde import GradingError
from course.term.edition import leaks, solution_blocks, write_edition

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def edition(tmp_path_factory):
    return write_edition(tmp_path_factory.mktemp("edition") / "students")


def test_the_edition_has_the_package_and_the_releases_only(edition):
    names = {p.name for p in edition.iterdir()}
    assert {"course", "week5", "README.md", "Makefile", "pyproject.toml"} <= names
    assert not names & {"solutions", "rubrics", "tests", "bench", "docs", ".git", "scripts"}


def test_no_hidden_test_and_no_solution_anywhere_in_it(edition):
    hits = subprocess.run(["grep", "-rlE", "### (BEGIN|END) (HIDDEN TESTS|SOLUTION)", str(edition)],
                          capture_output=True, text=True).stdout
    assert hits == ""
    assert solution_blocks(REPO), "the search must know what the solutions look like"
    assert leaks(edition) == []


def test_the_search_finds_a_solution_planted_in_a_folder(tmp_path):
    shutil.copy(REPO / "solutions" / "week5" / "week5.ipynb", tmp_path / "copied.ipynb")
    (tmp_path / "pasted.py").write_text("\n".join(solution_blocks(REPO)[0].splitlines()))
    found = leaks(tmp_path)
    assert any(f.startswith("copied.ipynb") for f in found)
    assert any(f.startswith("pasted.py: solution") for f in found)


def test_the_search_finds_a_weeks_declared_secret_in_that_weeks_folder_only(tmp_path):
    """solutions/week1/week.toml names the prediction's line ``"customer_id": "cus_marta"``
    a secret: in a week1/ folder it is a leak; in the package, which may hold the same
    text, it is not."""
    for folder in ("week1", "course"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "notes.py").write_text('PREDICTION = {"customer_id": "cus_marta"}\n')
    assert leaks(tmp_path) == ["week1/notes.py: the secret '\"customer_id\": \"cus_marta\"'"]


def test_it_refuses_a_folder_that_is_not_empty_and_writes_nothing(tmp_path):
    (tmp_path / "keep.txt").write_text("mine")
    with pytest.raises(GradingError, match="not empty"):
        write_edition(tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == ["keep.txt"]


@pytest.mark.slow
def test_its_self_check_runs_there_on_visible_tests_only(edition):
    env = {**os.environ, "PYTHONPATH": str(edition)}
    command = [sys.executable, "-m", "course.grader.selfcheck", "--week", "5"]
    blank = subprocess.run(command, cwd=edition, env=env, capture_output=True, text=True,
                           timeout=600)
    assert blank.returncode == 0, blank.stderr[-2000:]
    assert "hidden tests, which decide your points, are run by your instructor" in blank.stdout
    # no rubrics in this edition: the instructor grades the written answers
    assert "Written answers (3 cells, 6 points) are graded by your instructor." in blank.stdout
    last = blank.stdout.strip().splitlines()[-1]
    assert last.startswith("week5: visible tests passed 0/")
    total = last.split("/")[-1]
    solved = subprocess.run([*command, "--notebook", str(REPO / "solutions/week5/week5.ipynb")],
                            cwd=edition, env=env, capture_output=True, text=True, timeout=600)
    passed, tests = solved.stdout.strip().splitlines()[-1].split()[-1].split("/")
    assert passed == tests and int(tests) >= int(total)  # the solution passes its every test


def test_its_make_test_checks_started_weeks_visible_tests_only(edition):
    """The edition's ``make test``: weeks not started cost nothing; a started week's
    visible tests run; the hidden ones are said to be the instructor's."""
    path = [str(edition), *filter(None, [os.environ.get("PYTHONPATH")])]  # the edition's first
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path)}
    command = [sys.executable, "-m", "course.grader.selfcheck", "--started"]
    fresh = subprocess.run(command, cwd=edition, env=env, capture_output=True, text=True,
                           timeout=600)
    assert fresh.returncode == 0, fresh.stderr[-2000:]
    assert "week5: not started" in fresh.stdout and "visible tests passed" not in fresh.stdout
    assert "Hidden tests, which decide your points, are your instructor's" in fresh.stdout
    assert "selfcheck --started" in (edition / "Makefile").read_text()
    mine = edition / "week1" / "week1.ipynb"
    blank = mine.read_bytes()
    shutil.copy(REPO / "solutions" / "week1" / "week1.ipynb", mine)  # week 1 solved
    try:
        started = subprocess.run(command, cwd=edition, env=env, capture_output=True,
                                 text=True, timeout=600)
    finally:
        mine.write_bytes(blank)  # the edition is shared by this module's tests
    assert started.returncode == 0, started.stdout[-2000:]
    assert re.search(r"^week1: visible tests passed (\d+)/\1$", started.stdout, re.M)
    assert "week2: not started" in started.stdout
