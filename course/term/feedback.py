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
- in every output of every cell, a Python traceback printed as text (a forked worker's,
  on stderr) is cut down to its last line, any line that quotes a hidden test (a
  hidden-test line of :data:`QUOTE_MIN` characters or more) is dropped, and the grading
  machine's folders (the course, the environment, the sandbox's and temporary folders)
  read ``…`` (:func:`scrubbed`);
- and it drops every cell :mod:`course.term.rubric` added for graders.

It changes only the copy being rendered; the autograded notebook and the
gradebook keep everything.

The page itself is rendered by :mod:`course.term.nbconvert_soup_pass`'s exporter.
"""

from __future__ import annotations

import re

from nbconvert.preprocessors import Preprocessor
from nbformat import NotebookNode
from traitlets import Bool

from course.grader.cells import HIDDEN, HIDDEN_BLOCK, HIDDEN_END

PLACEHOLDER = "# (hidden tests ran here; what they said is below)"


def without_hidden_tests(source: str) -> str:
    """``source`` with every hidden-test block replaced by a one-line comment."""
    return HIDDEN_BLOCK.sub(PLACEHOLDER, source)


QUOTE_MIN = 12  # a hidden-test line this long is specific enough to drop where quoted
TRACEBACK = "Traceback (most recent call last):"
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def hidden_lines(nb) -> list[str]:
    """Every line of every hidden-test block in ``nb``, stripped, long enough to quote."""
    found = []
    for cell in nb.cells:
        for block in HIDDEN_BLOCK.findall(cell.source if cell.cell_type == "code" else ""):
            found += [line.strip() for line in block.splitlines()[1:]
                      if len(line.strip()) >= QUOTE_MIN and HIDDEN_END not in line]
    return list(dict.fromkeys(found))


def grading_folders(extra: tuple[str, ...] = ()) -> list[str]:
    """Folders of the grading machine a feedback page must not name, longest first."""
    import os
    import sys
    import tempfile

    from course.sandbox.jail import REPO, SANDBOX_ROOT

    # the course being graded is the working folder of nbgrader's commands
    folders = [str(REPO), sys.prefix, sys.base_prefix, str(SANDBOX_ROOT), os.getcwd(),
               tempfile.gettempdir(), os.path.expanduser("~"), *extra]
    return sorted({f.rstrip("/") for f in folders if f and f != "/"}, key=len, reverse=True)


def _without_tracebacks(lines: list[str]) -> list[str]:
    """Each printed traceback reduced to its last line (``Error: message``)."""
    kept, inside = [], False
    for line in lines:
        plain = ANSI.sub("", line)
        if plain.strip() == TRACEBACK:
            inside = True
            continue
        if inside and (plain[:1].isspace() or not plain.strip()
                       or plain.startswith(("During handling", "The above exception"))):
            continue
        inside = False
        kept.append(line)
    return kept


def scrubbed(text: str, quotes: list[str], folders: list[str]) -> str:
    """``text`` without printed tracebacks, lines quoting hidden tests, or grading folders."""
    lines = _without_tracebacks(text.split("\n"))
    lines = [line for line in lines if not any(q in ANSI.sub("", line) for q in quotes)]
    out = "\n".join(lines)
    for folder in folders:
        out = out.replace(folder, "…")
    return out


def _scrub_output(output: dict, quotes: list[str], folders: list[str]) -> dict:
    kind = output.get("output_type")
    if kind == "stream":
        return NotebookNode({**output, "text": scrubbed(output.get("text", ""), quotes,
                                                        folders)})
    if kind == "error":
        return NotebookNode({**output, "evalue": scrubbed(output.get("evalue", ""), quotes,
                                                          folders),
                             "traceback": [scrubbed(t, quotes, folders)
                                           for t in output.get("traceback", [])]})
    if kind in ("execute_result", "display_data") and "text/plain" in output.get("data", {}):
        data = dict(output["data"])
        plain = data["text/plain"]
        plain = "".join(plain) if isinstance(plain, list) else plain
        data["text/plain"] = scrubbed(plain, quotes, folders)
        return NotebookNode({**output, "data": data})
    return output


def short_error(output: dict) -> NotebookNode:
    """An error output reduced to ``name: message`` (no traceback)."""
    line = f"{output.get('ename', 'Error')}: {output.get('evalue', '')}".rstrip(": ")
    return NotebookNode({**output, "traceback": [line]})


class HideHiddenTests(Preprocessor):
    """Hide hidden tests (code and tracebacks) and graders' rubric cells in feedback."""

    enabled = Bool(True)  # nbconvert's preprocessors are off unless enabled

    def preprocess(self, nb, resources):
        from course.term.rubric import is_rubric_cell

        nb.cells = [cell for cell in nb.cells if not is_rubric_cell(cell)]
        self._quotes = hidden_lines(nb)
        self._folders = grading_folders()
        return super().preprocess(nb, resources)

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type != "code":
            return cell, resources
        if HIDDEN in cell.source:
            cell.source = without_hidden_tests(cell.source)
            cell.outputs = [short_error(o) if o.get("output_type") == "error" else o
                            for o in cell.outputs]
        cell.outputs = [_scrub_output(o, self._quotes, self._folders) for o in cell.outputs]
        return cell, resources
