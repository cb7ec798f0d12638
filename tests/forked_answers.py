"""Check many answers to one exercise from ONE run of the solution, by forking its kernel.

Grading a wrong answer with nbgrader runs its whole notebook in a new kernel: the imports,
every demo, every other exercise. A week's tests know more than a dozen answers, and most
of each run is the same work again. So the suite grades one wrong answer per exercise
with nbgrader (:func:`week_answers.bundles`) and checks the others here:

- :func:`probe_notebook` copies the solution notebook and puts, right before exercise E's
  first answer cell, a cell that calls :func:`check_in_children`.
- There the kernel holds exactly the state a graded run of any answer to E holds at that
  point. It forks once per answer; the child runs that answer instead of the solution's,
  then every later code cell up to E's last test cell, as a graded run would, and writes
  down what each test cell did. nbgrader's rule decides: a test cell fails when it raises,
  runs longer than a cell may (``nbgrader_config.py``'s ``TIMEOUT_S``), or writes to
  stderr: through ``sys.stderr`` now or any stream the kernel gave out before, or through
  file descriptor 2, where a process it starts writes (as in ``make check``, where the
  kernel captures it). The message is worded as the course's report words it
  (:func:`course.grader.verdict.failure`, which ``make check`` uses too).
- The parent goes on with the solution, to the next exercise.

What a child does not show: whether the answer breaks a later exercise (the bundled wrong
answers are graded in full for that; and :func:`week_answers.answers_used_across_exercises` proves
no test reads another exercise's answer). What it shares: the children run one after another
and see the files the run made before the fork, as each other's writes to them; the course's
tests build fresh worlds in new folders, so none reads another child's. The week suites
check this mechanism against nbgrader on every run, both ways: the bundled wrong answers
(the first children of their exercise) and the solution's own answer (one more child per
exercise) are checked here too, and the verdicts must match nbgrader's; every other answer
must fail exactly the tests it declares, or, if right, none.

A child must not talk to the kernel's front end (its ZeroMQ sockets belong to the parent),
so it sends nothing: its outputs are captured and every message it would send is dropped.
"""

from __future__ import annotations

import io
import json
import os
import signal
import tempfile
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from course.grader.week import Week

HARNESS = """\
import sys as _probe_sys
if {here!r} not in _probe_sys.path:
    _probe_sys.path.append({here!r})
from forked_answers import check_in_children as _check_in_children
_check_in_children({out!r}, {answers!r}, {cells!r}, {tests!r}, cell_timeout_s={cell!r},
                   timeout_s={timeout_s!r}, references={references!r}, answer_ids={ids!r})
"""
SOLUTION = "solution-ex{}"  # the name of the child that runs the solution's own answer


def probe_notebook(week: Week, answers: dict[int, dict[str, dict[str, str]]],
                   out: Path, *, cell_timeout_s: float, timeout_s: float = 300) -> Any:
    """``week``'s solution notebook with a forking cell before the first answer cell of
    every exercise in ``answers`` (``{exercise: {answer name: {answer grade_id: new
    source}}}``), plus, for each such exercise, a child named ``solution-exN`` that changes
    nothing. Each child's verdicts go to ``out/<answer name>.json``. The cells a child
    runs: every code cell from its exercise's first answer cell to its last test cell. The
    notebook ends with the last test cell of the last exercise checked."""
    import nbformat

    nb = nbformat.read(week.notebook, as_version=4)
    ids = [c.metadata.get("nbgrader", {}).get("grade_id") for c in nb.cells]
    inserts = []
    for number, named in answers.items():
        exercise = week.exercise(number)
        assert SOLUTION.format(number) not in named, f"{SOLUTION.format(number)} is taken"
        first = min(ids.index(g) for g in exercise.answers)
        last = max(ids.index(g) for g in exercise.tests)
        span = [(ids[i], nb.cells[i].source) for i in range(first, last + 1)
                if nb.cells[i].cell_type == "code"]
        source = HARNESS.format(here=str(Path(__file__).parent), out=str(out),
                                answers={SOLUTION.format(number): {}, **named}, cells=span,
                                tests=list(exercise.tests), cell=cell_timeout_s,
                                timeout_s=timeout_s, references=list(exercise.references),
                                ids=list(exercise.answers))
        inserts.append((first, nbformat.v4.new_code_cell(source)))
    # nothing after the last checked exercise's last test is needed: the solution's whole
    # run is nbgrader's to check (week 5 stops before the outbox and the kill tests)
    end = max(max(ids.index(g) for g in week.exercise(n).tests) for n in answers) + 1
    nb.cells = nb.cells[:end]
    for index, cell in sorted(inserts, key=lambda pair: -pair[0]):
        nb.cells.insert(index, cell)
    return nb


def check_in_children(out: str, answers: dict[str, dict[str, str]],
                      cells: list[tuple[str | None, str]], tests: list[str], *,
                      cell_timeout_s: float, timeout_s: float,
                      references: list[str] = (), answer_ids: list[str] = ()) -> None:
    """In a kernel, at the cell before an exercise's answer: for each answer (``{name:
    {grade_id: source}}``), fork; the child runs ``cells`` (``[(grade_id, source)]``) with
    the answer's sources in place of those grade ids and writes ``out/<name>.json``:
    ``{"tests": {test grade_id: [passed, message]}, "answer": [its cells ran without an
    error, the first error], "ended": "finished"}``. A child that did not finish (killed
    with everything it started after ``timeout_s``, or crashed) leaves ``"tests": {}`` and
    how it ended. ``references``: the exercise's reference implementations, watched while
    its tests run as the grader watches them (:mod:`course.sandbox.references`), over the
    answer cells ``answer_ids``."""
    from course.grading import run_forked  # imported in the kernel

    Path(out).mkdir(parents=True, exist_ok=True)
    for name, edits in answers.items():
        target = Path(out) / f"{name}.json"
        watch = (list(references), [edits.get(g, src) for g, src in cells if g in answer_ids])
        ended = run_forked(lambda target=target, edits=edits, watch=watch: _child(
            target, edits, cells, set(tests), cell_timeout_s, watch), timeout_s=timeout_s,
            process_group=True)
        if not target.exists():
            target.write_text(json.dumps({"tests": {}, "answer": [False, ""], "ended": ended}))


class CellTimeoutError(Exception):
    """A cell ran longer than a graded cell may."""


def _child(target: Path, edits: dict[str, str], cells: list[tuple[str | None, str]],
           tests: set[str], cell_timeout_s: float,
           watch: tuple[list[str], list[str]] = ((), ())) -> None:
    import sys

    from ipykernel.iostream import OutStream
    from IPython import get_ipython
    from IPython.utils.capture import capture_output
    from jupyter_client.session import Session

    Session.send = lambda *args, **kwargs: None  # the parent's sockets: send nothing
    shell = get_ipython()
    shell.showtraceback = lambda *args, **kwargs: None
    stderr = io.StringIO()  # every stderr the child writes to, in order
    if isinstance(sys.stderr, OutStream):  # the kernel's, which handlers made before hold
        sys.stderr.write = stderr.write  # (an attribute of each stream, not of the class)
        sys.stderr.flush = lambda: None
    saved_fd = os.dup(2)
    try:
        with tempfile.TemporaryFile() as fd_err, capture_output(stdout=True, stderr=False):
            os.dup2(fd_err.fileno(), 2)  # what started processes write to stderr
            streams = (stderr, fd_err)
            verdicts = _run(shell, streams, edits, cells, tests, cell_timeout_s, watch)
    except BaseException as error:  # say what went wrong instead of dying silently
        lines = traceback.format_exception_only(type(error), error)
        verdicts = {"tests": {}, "answer": [False, ""], "ended": f"crashed: {lines[-1].strip()}"}
    finally:
        os.dup2(saved_fd, 2)
    target.write_text(json.dumps(verdicts))


def _run(shell: Any, streams: tuple[io.StringIO, Any], edits: dict[str, str],
         cells: list[tuple[str | None, str]], tests: set[str],
         cell_timeout_s: float, watch: tuple[list[str], list[str]]) -> dict[str, Any]:
    """Each cell as the kernel runs one (kept in ``In``, which the course's new-process
    checks read), stopped after ``cell_timeout_s``; a test's verdict by nbgrader's rule."""
    import contextlib
    import sys

    from course.grader.verdict import failure
    from course.sandbox.references import message as delegation
    from course.sandbox.references import watching

    stderr, fd_err = streams
    sys.stderr = stderr

    def stop(signum: int, frame: Any) -> None:
        raise CellTimeoutError(f"the cell ran longer than {cell_timeout_s:g} s")

    signal.signal(signal.SIGALRM, stop)
    verdicts: dict[str, Any] = {"tests": {}, "answer": [True, ""]}
    for grade_id, source in cells:
        before, before_fd = stderr.tell(), os.fstat(2).st_size
        signal.setitimer(signal.ITIMER_REAL, cell_timeout_s)
        watched = watching(*watch, own=watch[1], namespace=shell.user_ns) \
            if grade_id in tests and watch[0] else contextlib.nullcontext(set())
        try:
            with watched as called:
                result = shell.run_cell(edits.get(grade_id, source), store_history=True)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        error = result.error_before_exec or result.error_in_exec
        fd_err.seek(before_fd)
        wrote = stderr.getvalue()[before:] + fd_err.read().decode(errors="replace")
        message = failure(type(error).__name__ if error else None, str(error) if error else None,
                          wrote, delegation(called) if called else "")
        if grade_id in edits:
            if error and verdicts["answer"][0]:
                verdicts["answer"] = [False, message]
        elif grade_id in tests:
            verdicts["tests"][grade_id] = [not message, message]
    verdicts["ended"] = "finished"
    return verdicts
