"""The forked answer checks (:mod:`forked_answers`) on a tiny notebook: each child says what
nbgrader would, and the run it forks from goes on as if nothing happened."""

from __future__ import annotations

import json

import nbformat
import pytest
from forked_answers import probe_notebook
from weeks import RUN_PROBE, errors_in, nbgrader_cell, start

pytestmark = pytest.mark.slow

SETUP = "COUNT = {'calls': 0}\n"
ANSWER = "def double(x):\n    ### BEGIN SOLUTION\n    return 2 * x\n    ### END SOLUTION\n"
VISIBLE = "# Exercise 1, visible test\nassert double(2) == 4, f'double(2) gave {double(2)}'\n"
HIDDEN = ("# Exercise 1, hidden test\nCOUNT['calls'] += 1\n"
          "assert double(-3) == -6, 'negative numbers'\n")
AFTER = "assert COUNT == {'calls': 1}, COUNT  # the children's changes stayed in the children\n"

ANSWERS = {
    "right": {"ex1": "def double(x):\n    return x + x\n"},
    "wrong": {"ex1": "def double(x):\n    return abs(2 * x)\n"},
    # what a process it starts writes to stderr counts, as in a graded kernel
    "noisy": {"ex1": "import subprocess, sys\n"
                     "def double(x):\n"
                     "    subprocess.run([sys.executable, '-c',\n"
                     "                    'import os; os.write(2, b\"boo\")'])\n"
                     "    return 2 * x\n"},
    "stuck": {"ex1": "import time\nwhile True:\n    time.sleep(0.05)\n"},
    "broken": {"ex1": "def double(x)\n    return 2 * x\n"},
}


def test_each_child_says_what_nbgrader_would_and_the_parent_goes_on(tmp_path):
    notebook = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell(SETUP),
        nbgrader_cell(ANSWER, grade_id="ex1", solution=True, grade=False),
        nbgrader_cell(VISIBLE, grade_id="ex1_visible", grade=True, points=1),
        nbgrader_cell(HIDDEN, grade_id="ex1_hidden", grade=True, points=1),
        nbformat.v4.new_code_cell(AFTER),
    ])
    solution = tmp_path / "tiny.ipynb"
    nbformat.write(notebook, solution)
    probe = tmp_path / "probe" / "tiny.ipynb"
    probe.parent.mkdir()
    nbformat.write(probe_notebook(solution, {1: ANSWERS}, tmp_path / "verdicts", timeout_s=3),
                   probe)
    done = start("-c", RUN_PROBE, str(probe))
    _, err = done.communicate(timeout=300)
    assert done.returncode == 0, err[-3000:]
    assert errors_in(probe) == []  # AFTER ran in the parent, which kept its own COUNT

    said = {name: json.loads((tmp_path / "verdicts" / f"{name}.json").read_text())
            for name in ANSWERS}
    assert said["right"] == {"tests": {"ex1_visible": [True, ""], "ex1_hidden": [True, ""]},
                             "answer": [True, ""], "ended": "exit 0"}
    assert said["wrong"]["tests"] == {
        "ex1_visible": [True, ""], "ex1_hidden": [False, "AssertionError: negative numbers"]}
    noisy = [False, "the test wrote to stderr, which nbgrader scores 0: boo"]
    assert said["noisy"]["tests"] == {"ex1_visible": noisy, "ex1_hidden": noisy}
    assert said["stuck"] == {"tests": {}, "answer": [False, ""], "ended": "timeout"}
    assert said["broken"]["answer"][0] is False
    assert said["broken"]["answer"][1].startswith("SyntaxError")
    assert [ok for ok, _ in said["broken"]["tests"].values()] == [False, False]
    assert all(m.startswith("NameError: name 'double' is not defined")
               for _, m in said["broken"]["tests"].values())
