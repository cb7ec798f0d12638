"""What a student's feedback may show: which hidden test failed and what it said, never its code.

nbgrader's ``generate_feedback`` turns the autograded notebook (hidden tests put back
and run) into HTML; left alone it prints every hidden test's source, and a failed
test's traceback quotes the lines around the failing assertion. Added to
``GenerateFeedback.preprocessors`` (``nbgrader_config.py``), :class:`HideHiddenTests`
promises, for every cell holding nbgrader's begin-hidden-tests marker:

- the code between the markers is replaced by one comment saying hidden tests ran
  there (the visible part of the cell stays);
- each error output keeps its name and message (``AssertionError: refund has no
  key``) and loses its traceback, which could quote hidden code;
- and it drops every cell :mod:`course.grading.rubric` added for graders.

It changes only the copy being rendered; the autograded notebook and the
gradebook keep everything.
"""

from __future__ import annotations

import re

from nbconvert.preprocessors import Preprocessor
from nbformat import NotebookNode
from traitlets import Bool

# Spelled in two parts so that this file itself never contains a marker (the student
# edition is searched for them).
BEGIN, END = "### BEGIN " + "HIDDEN TESTS", "### END " + "HIDDEN TESTS"
HIDDEN_BLOCK = re.compile(re.escape(BEGIN) + r".*?(?:" + re.escape(END) + r"|\Z)", re.S)
PLACEHOLDER = "# (hidden tests ran here; what they said is below)"


def without_hidden_tests(source: str) -> str:
    """``source`` with every hidden-test block replaced by a one-line comment."""
    return HIDDEN_BLOCK.sub(PLACEHOLDER, source)


def short_error(output: dict) -> NotebookNode:
    """An error output reduced to ``name: message`` (no traceback)."""
    line = f"{output.get('ename', 'Error')}: {output.get('evalue', '')}".rstrip(": ")
    return NotebookNode({**output, "traceback": [line]})


class HideHiddenTests(Preprocessor):
    """Hide hidden tests (code and tracebacks) and graders' rubric cells in feedback."""

    enabled = Bool(True)  # nbconvert's preprocessors are off unless enabled

    def preprocess(self, nb, resources):
        from course.grading.rubric import is_rubric_cell

        nb.cells = [cell for cell in nb.cells if not is_rubric_cell(cell)]
        return super().preprocess(nb, resources)

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type == "code" and BEGIN in cell.source:
            cell.source = without_hidden_tests(cell.source)
            cell.outputs = [short_error(o) if o.get("output_type") == "error" else o
                            for o in cell.outputs]
        return cell, resources
