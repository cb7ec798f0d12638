"""docs/contributing.md's "Add a week", followed word for word in a throwaway copy.

A tiny week 8 (one exercise, one wrong answer, one written answer) is added step by step;
each step's commands are read from the guide and run as written, and must pass. The suite
(``tests/test_week8.py`` with every week's checks), ``make release``, ``make check`` and the
README's table of weeks all pick the new week up.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from weeks import REPO, nbgrader_cell

pytestmark = pytest.mark.slow

GUIDE = REPO / "docs" / "contributing.md"

DECLARATION = """\
title = "Twice is once"
gains = "a function that doubles"
demos = ["doubled: 42"]
secrets = ["return 2 * x"]

[[exercises]]
number = 1
title = "double"
points = 2
answers = ["ex1_double"]
visible = ["ex1_visible"]
hidden = ["ex1_hidden"]

[[written]]
id = "reflection_1"
points = 1

[checks]
at_least = 1
bundled = 1
"""


def guide_steps() -> list[list[str]]:
    """The commands of each numbered step of "Add a week", in order."""
    section = GUIDE.read_text().split("## Add a week", 1)[1]
    blocks = re.split(r"^\d\. ", section, flags=re.M)[1:]
    return [[line.strip() for line in block.splitlines()
             if line.startswith("       ") and line.strip().startswith((".venv/", "make "))]
            for block in blocks]


def guide_test_module() -> str:
    """The ``tests/test_week8.py`` the guide shows, as it shows it."""
    section = GUIDE.read_text().split("These three lines are enough", 1)[1].split("Run them", 1)[0]
    return "".join(line[7:] + "\n" for line in section.splitlines()
                   if line.startswith("       "))


def notebook() -> nbformat.NotebookNode:
    written = nbformat.v4.new_markdown_cell("Because doubling twice is the same as once.")
    written.metadata["nbgrader"] = {"schema_version": 3, "task": False, "locked": False,
                                    "grade": True, "solution": True, "points": 1,
                                    "grade_id": "reflection_1"}
    locked = {"locked": True, "grade": True, "points": 1}
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": {
        "name": "python3", "display_name": "Python 3", "language": "python"}})
    nb.cells = [
        nbformat.v4.new_markdown_cell("# Week 8 — Twice is once\n\nA tiny week."),
        nbformat.v4.new_code_cell("print('doubled:', 2 * 21)"),
        nbformat.v4.new_markdown_cell("## Exercise 1 — double (2 points)"),
        nbgrader_cell("def double(x):\n    ### BEGIN SOLUTION\n    return 2 * x\n"
                      "    ### END SOLUTION", solution=True, grade_id="ex1_double"),
        nbgrader_cell("# Exercise 1, visible test\nassert double(2) == 4, "
                      "f'double(2) gave {double(2)}'", grade_id="ex1_visible", **locked),
        nbgrader_cell("# Exercise 1, hidden test\n### BEGIN HIDDEN TESTS\n"
                      "assert double(-3) == -6, f'double(-3) gave {double(-3)}'\n"
                      "### END HIDDEN TESTS", grade_id="ex1_hidden", **locked),
        nbformat.v4.new_markdown_cell("## Reflection (1 point, graded by a person)\n\n"
                                      "Why is doubling safe to repeat?"),
        written,
    ]
    return nb


def test_adding_a_week_as_the_guide_says_is_picked_up_everywhere(tmp_path):
    from course.host.checkout import copy_tracked

    steps = guide_steps()
    assert [len(s) for s in steps] == [1, 1, 1, 3], steps
    course = copy_tracked(REPO, tmp_path / "course")
    venv = Path(sys.executable).parents[1]
    (course / ".venv").symlink_to(venv)  # its interpreters import the copy's package:
    # PYTHONPATH comes before the environment's editable install of this checkout. Graded
    # kernels run outside the sandbox here: it would bind this checkout's package, not the
    # copy's (the sandbox has tests of its own)
    stamp = course / ".venv" / ".installed"

    path = [str(course), *filter(None, [os.environ.get("PYTHONPATH")])]

    def run(command: str) -> str:
        args = command.split()
        if args[0] == "make":  # the copy shares this checkout's environment: never rebuild it
            # (-o names the target as the Makefile spells it, relative: an absolute path is
            # another name to make, and a pyproject.toml newer than the stamp reinstalled
            # this checkout's environment pointing at the copy)
            args = ["make", "-s", "-o", str(stamp.relative_to(course)), *args[1:]]
        done = subprocess.run(args, cwd=course, capture_output=True, text=True, timeout=900,
                              env={**os.environ, "PYTHONPATH": os.pathsep.join(path),
                                   "COURSE_GRADING_SANDBOX": "off"})
        assert done.returncode == 0, f"{command}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        return done.stdout

    week = course / "solutions" / "week8"
    week.mkdir()
    nbformat.write(notebook(), week / "week8.ipynb")
    (week / "week.toml").write_text(DECLARATION)
    assert "week8: 1 exercises, 2 points + 1 written, 0 known answers" in run(steps[0][0])

    (course / "rubrics" / "week8.md").write_text("# Week 8 rubric\n\n## reflection_1\n\n"
                                                 "Doubling is not idempotent; 1 point.\n")
    run(steps[1][0])
    release = json.loads((course / "week8" / "week8.ipynb").read_text())
    assert "raise NotImplementedError()" in json.dumps(release)
    assert sorted(p.name for p in (course / "week8").iterdir()) == ["week8.ipynb"]

    wrong = week / "answers" / "ex1_absolute"
    wrong.mkdir(parents=True)
    (wrong / "ex1_double.py").write_text("def double(x):\n    return abs(2 * x)\n")
    (wrong / "answer.toml").write_text('why = "a sign lost"\nexercise = 1\n'
                                       'fails = ["ex1_hidden"]\n')
    common = week / "answers" / "ex1_adds"  # the most common mistake fails a visible test
    common.mkdir(parents=True)
    (common / "ex1_double.py").write_text("def double(x):\n    return x + 1\n")
    (common / "answer.toml").write_text('why = "adds one"\nexercise = 1\n'
                                        'fails = ["ex1_visible", "ex1_hidden"]\n'
                                        'common = true\n')
    (course / "tests" / "test_week8.py").write_text(guide_test_module())
    said = run(steps[2][0])
    assert re.search(r"\b1[0-9] passed\b", said) and "skipped" not in said, said

    table = run(steps[3][0]).strip()
    assert "| 8 | Twice is once | a function that doubles |" in table
    readme = course / "README.md"
    old = re.search(r"^\| week \| title .*?(?=\n\n)", readme.read_text(), re.M | re.S).group(0)
    readme.write_text(readme.read_text().replace(old, table))
    assert "1 passed" in run(steps[3][1])
    assert run(steps[3][2]).strip().splitlines()[-1] == "week8: 0/2"
