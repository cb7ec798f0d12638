"""Check many answers to one exercise from ONE run of the solution, by forking its kernel.

Grading a wrong answer with nbgrader runs its whole notebook in a new kernel: the imports,
every demo, every other exercise. A week's tests know more than a dozen answers, and most
of each run is the same work again. So the suite grades a couple of wrong answers per
exercise with nbgrader (:mod:`weeks`' bundles) and checks the others here:

- :func:`probe_notebook` copies the solution notebook and puts, right before exercise E's
  first answer cell, a cell that calls :func:`check_in_children`.
- There the kernel holds exactly the state a graded run of any answer to E holds at that
  point. It forks once per answer; the child runs that answer instead of the solution's,
  then every later code cell up to E's last test cell, as a graded run would, and writes
  down what each test cell did. nbgrader's rule decides: a test cell fails when it raises
  or writes to stderr (its own ``sys.stderr`` or file descriptor 2, which a process it starts
  writes to); the message is the error's ``Name: value``, as the course's report gives it.
- The parent goes on with the solution, to the next exercise.

What a child does not show: whether the answer breaks a later exercise (the bundled wrong
answers are graded in full for that; and :func:`weeks.answers_used_across_exercises` proves
no test reads another exercise's answer). What it shares: the children run one after another
and see the files the run made before the fork, as each other's writes to them; the course's
tests build fresh worlds in new folders, so none reads another child's. The week suites
check this mechanism against nbgrader on every run: each bundled wrong answer (the first
children of their exercise) is checked here too, and both must agree; every other answer
must fail exactly the tests it declares.

A child must not talk to the kernel's front end (its ZeroMQ sockets belong to the parent),
so it sends nothing: its outputs are captured and every message it would send is dropped.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import nbformat

HARNESS = """\
import sys as _probe_sys
_probe_sys.path.insert(0, {here!r})
from forked_answers import check_in_children as _check_in_children
_check_in_children({out!r}, {answers!r}, {cells!r}, {tests!r}, timeout_s={timeout_s!r})
"""


def probe_notebook(solution: Path, answers: dict[int, dict[str, dict[str, str]]],
                   out: Path, *, timeout_s: float = 300) -> nbformat.NotebookNode:
    """The solution notebook with a forking cell before the first answer cell of every
    exercise in ``answers`` (``{exercise: {answer name: {answer grade_id: new source}}}``);
    each child's verdicts go to ``out/<answer name>.json``. ``cells`` of an exercise: every
    code cell from its first answer cell to its last test cell, as ``(grade_id, source)``;
    ``tests``: the grade ids of its test cells."""
    from weeks import _cells_by_exercise  # tests/ is on the path

    nb = nbformat.read(solution, as_version=4)
    by_exercise: dict[int, list[str]] = {}
    tests: dict[int, list[str]] = {}
    for number, kind, cell in _cells_by_exercise(solution):
        by_exercise.setdefault(number, []).append(cell.metadata["nbgrader"]["grade_id"])
        if kind == "test":
            tests.setdefault(number, []).append(cell.metadata["nbgrader"]["grade_id"])
    ids = [c.metadata.get("nbgrader", {}).get("grade_id") for c in nb.cells]
    inserts = []
    for exercise, named in answers.items():
        first, last = ids.index(by_exercise[exercise][0]), ids.index(by_exercise[exercise][-1])
        span = [(ids[i], nb.cells[i].source) for i in range(first, last + 1)
                if nb.cells[i].cell_type == "code"]
        source = HARNESS.format(here=str(Path(__file__).parent), out=str(out), answers=named,
                                cells=span, tests=tests[exercise], timeout_s=timeout_s)
        inserts.append((first, nbformat.v4.new_code_cell(source)))
    for index, cell in sorted(inserts, key=lambda pair: -pair[0]):
        nb.cells.insert(index, cell)
    return nb


def check_in_children(out: str, answers: dict[str, dict[str, str]],
                      cells: list[tuple[str | None, str]], tests: list[str], *,
                      timeout_s: float) -> None:
    """In a kernel, at the cell before an exercise's answer: for each answer (``{name:
    {grade_id: source}}``), fork; the child runs ``cells`` (``[(grade_id, source)]``) with
    the answer's sources in place of those grade ids and writes ``out/<name>.json``:
    ``{"tests": {test grade_id: [passed, message]}, "answer": [ran without an error, its
    error], "ended": "exit 0"}``, or, for a child that did not finish (killed after
    ``timeout_s``, or crashed), ``"tests": {}`` and how it ended."""
    from course.grading import run_forked  # imported in the kernel

    Path(out).mkdir(parents=True, exist_ok=True)
    for name, edits in answers.items():
        target = Path(out) / f"{name}.json"
        ended = run_forked(
            lambda target=target, edits=edits: _child(target, edits, cells, set(tests)),
            timeout_s=timeout_s)
        if not target.exists():
            target.write_text(json.dumps({"tests": {}, "answer": [False, ""], "ended": ended}))


def _child(target: Path, edits: dict[str, str], cells: list[tuple[str | None, str]],
           tests: set[str]) -> None:
    from IPython import get_ipython
    from IPython.utils.capture import capture_output
    from jupyter_client.session import Session

    Session.send = lambda *args, **kwargs: None  # the parent's sockets: send nothing
    shell = get_ipython()
    shell.showtraceback = lambda *args, **kwargs: None
    with tempfile.TemporaryFile() as fd_err:
        os.dup2(fd_err.fileno(), 2)  # what started processes write to stderr
        verdicts = _run(shell, capture_output, fd_err, edits, cells, tests)
    target.write_text(json.dumps(verdicts))


def _run(shell: Any, capture_output: Any, fd_err: Any, edits: dict[str, str],
         cells: list[tuple[str | None, str]], tests: set[str]) -> dict[str, Any]:
    """Each cell as the kernel runs one (in ``In``, which the course's new-process checks
    read); a test's verdict by nbgrader's rule, its message as the course's report words it."""
    verdicts: dict[str, Any] = {"tests": {}, "answer": [True, ""]}
    for grade_id, source in cells:
        before = os.fstat(2).st_size
        with capture_output() as captured:
            result = shell.run_cell(edits.get(grade_id, source), store_history=True)
        error = result.error_before_exec or result.error_in_exec
        fd_err.seek(before)
        wrote = captured.stderr + fd_err.read().decode(errors="replace")
        said = next((line for line in wrote.splitlines() if line.strip()), "")
        raised = f"{type(error).__name__}: {error}".strip().rstrip(":") if error else ""
        if grade_id in edits:
            verdicts["answer"] = [error is None, raised]
        elif grade_id in tests:
            message = raised or (f"the test wrote to stderr, which nbgrader scores 0: "
                                 f"{said.strip()[:100]}" if wrote.strip() else "")
            verdicts["tests"][grade_id] = [not message, message]
    verdicts["ended"] = "exit 0"
    return verdicts
