"""The forked answer checks (:mod:`forked_answers`) on a tiny notebook: each child gives the
verdict nbgrader's rule gives (an error, too long a cell, or anything on stderr fails a
test), a child that never ends is killed with what it started, and the run it forks from
goes on as if nothing happened."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from forked_answers import probe_notebook
from weeks import RUN_PROBE, errors_in, nbgrader_cell, start

from course.grader.week import Exercise, Week

pytestmark = pytest.mark.slow

SETUP = ("import logging, sys\n"
         "COUNT = {'calls': 0}\n"
         "LOG = logging.getLogger('tiny')  # its handler holds the kernel's own stderr\n"
         "LOG.addHandler(logging.StreamHandler(sys.stderr))\n"
         "LOG.propagate = False\n")
ANSWER = "def double(x):\n    ### BEGIN SOLUTION\n    return 2 * x\n    ### END SOLUTION\n"
VISIBLE = "# Exercise 1, visible test\nassert double(2) == 4, f'double(2) gave {double(2)}'\n"
HIDDEN = ("# Exercise 1, hidden test\nCOUNT['calls'] += 1\n"
          "assert double(-3) == -6, 'negative numbers'\n")
AFTER = "assert COUNT == {'calls': 1}, COUNT  # the children's changes stayed in the children\n"


def _double_that(*lines: str) -> str:
    return "def double(x):\n" + "".join(f"    {line}\n" for line in lines) + "    return 2 * x\n"


ANSWERS = {
    "right": {"ex1": "def double(x):\n    return x + x\n"},
    "wrong": {"ex1": "def double(x):\n    return abs(2 * x)\n"},
    # what a process it starts writes to stderr counts, as in a graded kernel
    "noisy": {"ex1": "import subprocess, sys\n" + _double_that(
        "subprocess.run([sys.executable, '-c', 'import os; os.write(2, b\"boo\")'])")},
    "warns": {"ex1": "import sys\n" + _double_that("print('careful', file=sys.stderr)")},
    "logs": {"ex1": _double_that("LOG.warning('through a handler made before the fork')")},
    "slow": {"ex1": "import time\n" + _double_that("time.sleep(60)")},
    # ignores the cell's time limit and starts a process that would outlive it
    "runaway": {"ex1": "import signal, subprocess, time\n"
                       "signal.signal(signal.SIGALRM, signal.SIG_IGN)\n"
                       "SLEEPER = subprocess.Popen(['sleep', '600'])\n"
                       "open('sleeper.pid', 'w').write(str(SLEEPER.pid))\n"
                       "while True:\n    time.sleep(0.05)\n"},
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
    week = Week(1, "tiny", "", tmp_path, (Exercise(1, "double", 2, ("ex1",), ("ex1_visible",),
                                                   ("ex1_hidden",)),))
    nbformat.write(notebook, week.notebook)
    probe = tmp_path / "probe" / "tiny.ipynb"
    probe.parent.mkdir()
    nbformat.write(probe_notebook(week, {1: ANSWERS}, tmp_path / "verdicts",
                                  cell_timeout_s=2, timeout_s=10), probe)
    done = start("-c", RUN_PROBE, str(probe))
    _, err = done.communicate(timeout=300)
    assert done.returncode == 0, err[-3000:]
    assert errors_in(probe) == []  # AFTER ran in the parent, which kept its own COUNT

    said = {path.stem: json.loads(path.read_text())
            for path in (tmp_path / "verdicts").glob("*.json")}
    assert set(said) == {*ANSWERS, "solution-ex1"}
    passes = {"tests": {"ex1_visible": [True, ""], "ex1_hidden": [True, ""]},
              "answer": [True, ""], "ended": "finished"}
    assert said["right"] == said["solution-ex1"] == passes
    assert said["wrong"]["tests"] == {
        "ex1_visible": [True, ""], "ex1_hidden": [False, "AssertionError: negative numbers"]}
    for name, words in [("noisy", "boo"), ("warns", "careful"),
                        ("logs", "through a handler made before the fork")]:
        failed = [False, f"the test wrote to stderr, which nbgrader scores 0: {words}"]
        assert said[name]["tests"] == {"ex1_visible": failed, "ex1_hidden": failed}, name
    stopped = [False, "CellTimeoutError: the cell ran longer than 2 s"]
    assert said["slow"]["tests"] == {"ex1_visible": stopped, "ex1_hidden": stopped}
    assert said["runaway"] == {"tests": {}, "answer": [False, ""], "ended": "timeout"}
    sleeper = Path(f"/proc/{(probe.parent / 'sleeper.pid').read_text()}/stat")
    assert not sleeper.exists() or sleeper.read_text().split()[2] == "Z", (
        "the runaway child's process outlived it")
    assert said["broken"]["answer"][0] is False
    assert said["broken"]["answer"][1].startswith("SyntaxError")
    assert [ok for ok, _ in said["broken"]["tests"].values()] == [False, False]
    assert all(m.startswith("NameError: name 'double' is not defined")
               for _, m in said["broken"]["tests"].values())
