"""Put back edited test cells, and warn only about edits a person should know of.

nbgrader's ``OverwriteCells`` restores every locked cell from the gradebook and warns
"Attribute 'checksum' for cell ... has changed" for each one that differs. Every
cell with hidden tests differs by design (the student's copy never had them), so a
perfect submission of week 5 printed ten warnings. :class:`RestoreCells` (named in
``nbgrader_config.py``) restores exactly as nbgrader does, and:

- stays silent when the only difference is the hidden tests nbgrader removed;
- otherwise logs one line that names the student and the cell: the student edited
  or broke a locked cell, and the original was put back (no points from tampering).
"""

from __future__ import annotations

import re

from nbgrader.preprocessors import OverwriteCells

from course.grading.feedback import HIDDEN_BLOCK


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
            self.log.warning("%s: the locked cell %s was edited; the original was put back",
                             self._student, name)
            return
        self.log.warning("%s: cell %s had its %s changed (%s instead of %s); put back",
                         self._student, name, attr, new, old)
