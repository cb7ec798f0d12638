"""The lab's Validate answer, short: what to do next first, then one line per exercise.

nbgrader's Validate button (its ``validate_assignment`` server extension) shows every
failing test cell's whole source and traceback: on an unfinished week 5, 36,541
characters in which the one useful line is hard to find. :class:`CourseValidator` runs the
notebook exactly as nbgrader's ``Validator`` does and decides pass or fail the same way
(the same cells fail); only the words change. It promises:

- a notebook that passes gets nbgrader's own answer ("Success! ...");
- a failing one gets one entry whose text starts with "What to do next:" and the first
  exercise to fix (the heading it sits under, e.g. "Exercise 2 — wire the graph"), then one
  line per exercise that does not pass yet, each with the one line that says why: its
  answer cell's error when the answer cell raised (that is the cause; the test's error
  follows from it), else its first failing test's last error line;
- a syntax error names its line in the cell, not the kernel's temporary file;
- the wording is :mod:`course.grader.verdict`'s, the one ``make check`` uses.

It is also a Jupyter server extension (``course.grader.validate``) that serves nbgrader's
two Validate routes (``/assignments/validate``, ``/nbgrader_version``) with nbgrader's own
handlers, the notebook validated by :class:`CourseValidator`. The learner's lab (``make
lab``, ``course/classroom/jupyter/learner/``) turns nbgrader's ``validate_assignment``
extension off and this one on. When validating fails (an unreadable notebook, metadata of
another nbgrader version), nbgrader's handler answers in its own words.

Library hooks: ``CourseValidateHandler.validate_notebook`` overrides a method of nbgrader's
``ValidateAssignmentHandler``; ``_jupyter_server_extension_points`` and
``_load_jupyter_server_extension`` are jupyter_server's documented extension entry points;
the one private hook (nbgrader's ``Validator._get_failed_cells``) is in
:mod:`course.grader.nbgrader_failed_cells`.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

from jupyter_server.utils import url_path_join
from nbformat.notebooknode import NotebookNode
from nbgrader import utils
from nbgrader.server_extensions.validate_assignment.handlers import (
    NbGraderVersionHandler,
    ValidateAssignmentHandler,
)
from tornado import web

from course.grader.nbgrader_failed_cells import FailedCellsKept
from course.grader.verdict import NOT_DONE, failure, in_cell, next_step

# nbgrader's dialog puts "The following cell failed:" above each entry; ours is one entry
# that is not a cell, so that line is hidden (the error part of an entry is HTML).
# The entry's error part (this style, nothing to show) is hidden as well.
_HIDE_NBGRADER_LINE = ("<style>#validation-message.validation-failed > div > p, "
                       "#validation-message.validation-failed > div.jp-RenderedText:last-child"
                       " {display: none;}</style>")
WIDTH = 88  # the dialog shows the text as it is (no wrapping): lines this long fit
_POINTS = re.compile(r"\s*\(\d+(?:\.\d+)? points?[^)]*\)\s*$")


@dataclass
class Failing:
    """One exercise that does not pass yet: its heading, why, and whether its answer
    cell (rather than a test) raised."""

    exercise: str
    message: str
    answer: bool
    tests: int = 0


def _heading(cell: NotebookNode, current: str) -> str:
    titles = re.findall(r"^#{1,3} +(.+)$", cell.source, re.M)
    return _POINTS.sub("", titles[0].strip()) if titles else current


def _error(cell: NotebookNode, where: str) -> str:
    """The one line that says why ``cell`` failed ("" when it raised nothing)."""
    errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
    if errors:
        return failure(errors[-1].get("ename"), in_cell(errors[-1].get("evalue", ""), where))
    stderr = "".join(o.get("text", "") for o in cell.get("outputs", [])
                     if o.get("output_type") == "stream" and o.get("name") == "stderr")
    return failure(stderr=stderr)


def failing_exercises(nb: NotebookNode, failed: list[NotebookNode]) -> list[Failing]:
    """The exercises of executed ``nb`` with a cell in ``failed``, in the notebook's
    order, each with the first reason to fix."""
    failed_ids = {id(cell) for cell in failed}
    found: dict[str, Failing] = {}
    raised: dict[str, str] = {}  # heading -> its first answer cell's error
    heading = "(before the first heading)"
    for cell in nb.cells:
        if cell.cell_type == "markdown" and not utils.is_solution(cell):
            heading = _heading(cell, heading)
        if cell.cell_type != "code":
            if id(cell) in failed_ids:  # a written answer nbgrader counts as failed
                found.setdefault(heading, Failing(
                    heading, "not written yet (a person grades it)", False)).tests += 1
            continue
        if utils.is_solution(cell) and heading not in raised:
            said = _error(cell, "the answer cell")
            if said:
                raised[heading] = said
        if id(cell) not in failed_ids:
            continue
        entry = found.get(heading)
        if entry is None:
            if heading in raised:
                entry = Failing(heading, raised[heading], True)
            else:
                said = _error(cell, "the test cell") or "partial credit: some tests failed"
                entry = Failing(heading, said, False)
            found[heading] = entry
        entry.tests += 1
    return list(found.values())


def summary(exercises: list[Failing]) -> str:
    """The Validate answer for a notebook whose ``exercises`` do not pass yet."""
    first = exercises[0]
    tests = sum(e.tests for e in exercises)
    todo = f"What to do next: {next_step(first.exercise, first.message, answer=first.answer)}"
    lines = [*textwrap.wrap(todo, WIDTH, subsequent_indent="  "),
             "Then press Validate again (it saves the notebook first).", "",
             f"Not passing yet ({len(exercises)} exercise{'s' * (len(exercises) != 1)}, "
             f"{tests} test cell{'s' * (tests != 1)}):"]
    for entry in exercises:
        said = ("not done yet (YOUR CODE HERE)" if entry.message == NOT_DONE
                else f"its answer cell: {entry.message}" if entry.answer else entry.message)
        lines += textwrap.wrap(f"- {entry.exercise}: {said}", WIDTH, initial_indent="  ",
                               subsequent_indent="    ")
    lines += ["", "Run a test cell to see its whole error under it."]
    return "\n".join(lines)


class CourseValidator(FailedCellsKept):
    """nbgrader's ``Validator`` with a short answer for a failing notebook (the executed
    notebook and its failed cells: :mod:`course.grader.nbgrader_failed_cells`)."""

    def validate(self, filename: str) -> dict:
        self.executed = None
        results = super().validate(filename)
        if not results.get("failed") or self.executed is None:
            return results
        text = summary(failing_exercises(*self.executed))
        results["failed"] = [{"source": text, "error": _HIDE_NBGRADER_LINE,
                              "raw_error": ""}]
        return results


class CourseValidateHandler(ValidateAssignmentHandler):
    """nbgrader's Validate handler with the course's validator."""

    def validate_notebook(self, path: str) -> dict:
        root = Path(self.root_dir).resolve()
        target = (root / path).resolve()
        if not target.is_relative_to(root):
            raise web.HTTPError(403, "Access denied: path outside allowed directory")
        try:
            result = CourseValidator(config=self.load_config()).validate(str(target))
        except Exception:  # nbgrader's handler words its own errors (schema, unreadable)
            return super().validate_notebook(path)
        return {"success": True, "value": result}


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    return [{"module": "course.grader.validate"}]


def _load_jupyter_server_extension(serverapp) -> None:
    webapp = serverapp.web_app
    webapp.settings["root_dir"] = serverapp.root_dir
    base = webapp.settings["base_url"]
    webapp.add_handlers(".*$", [
        (url_path_join(base, "/assignments/validate"), CourseValidateHandler),
        (url_path_join(base, "/nbgrader_version"), NbGraderVersionHandler),
    ])
