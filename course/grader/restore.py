"""Put back edited test cells, and warn only about edits a person should know of.

nbgrader's ``OverwriteCells`` restores every locked cell from the gradebook and warns
"Attribute 'checksum' for cell ... has changed" for each one that differs. Every
cell with hidden tests differs by design (the student's copy never had them), so a
perfect submission of week 5 printed ten warnings. :class:`RestoreCells` (named in
``nbgrader_config.py``) restores exactly as nbgrader does, and:

- stays silent when the only difference is the hidden tests nbgrader removed;
- otherwise logs one line that names the student and the cell: the student edited
  or broke a locked cell, and the original was put back (no points from tampering).
  The line also goes to the file ``COURSE_GRADING_NOTES`` names, if set (``make grade``
  prints those lines; nbgrader keeps its own log to itself unless grading fails).

Library hooks: ``preprocess_cell`` is a Preprocessor's public API; ``report_change(name,
attr, old, new)`` is the method ``OverwriteCells.preprocess_cell`` calls for each restored
attribute, and the override reads ``OverwriteCells``' ``gradebook``, ``notebook_id`` and
``assignment_id`` (set in its ``preprocess``). None of them is underscored, but none is
documented either: tests/test_upstream_grader.py fails if they change.

Written against: nbgrader 0.9.6.
Upstream: no upstream issue; the hook is nbgrader's, undocumented.
"""

from __future__ import annotations

import os
import re

from nbgrader.preprocessors import OverwriteCells

from course.grader.cells import HIDDEN_BLOCK


def _bare(source: str) -> str:
    return re.sub(r"\s+", "", HIDDEN_BLOCK.sub("", source))


class RestoreCells(OverwriteCells):
    """nbgrader's OverwriteCells without the warnings hidden tests cause by design."""

    def preprocess_cell(self, cell, resources, cell_index):
        self._submitted = cell.source
        self._student = resources.get("nbgrader", {}).get("student", "?")
        return super().preprocess_cell(cell, resources, cell_index)

    def report_change(self, name, attr, old, new):
        if attr == "checksum":
            source = self.gradebook.find_source_cell(
                name, self.notebook_id, self.assignment_id).source
            if _bare(source) == _bare(self._submitted):
                return
            self._note(f"{self._student}: the locked cell {name} was edited; the original "
                       "was put back")
            return
        self._note(f"{self._student}: cell {name} had its {attr} changed ({new} instead of "
                   f"{old}); put back")

    def _note(self, line: str) -> None:
        from course.grader.verdict import one_line

        line = one_line(line)  # ``new`` is the student's metadata: one line, printable
        self.log.warning(line)
        notes = os.environ.get("COURSE_GRADING_NOTES")
        if notes:
            with open(notes, "a") as out:
                out.write(line + "\n")
