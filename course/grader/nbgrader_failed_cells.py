"""nbgrader's ``Validator`` that keeps the executed notebook and its failed cells.

What it works around: nbgrader's ``Validator.validate`` executes the notebook, picks the
failed cells with its private ``_get_failed_cells(nb)`` and returns only its own rendering
of them (each failing cell's whole source and traceback). The lab's short Validate answer
(:mod:`course.grader.validate`) needs the executed notebook and nbgrader's own choice of
failed cells, so that the same cells fail; nbgrader offers no public way to get them.
:class:`FailedCellsKept` overrides ``_get_failed_cells`` to keep both in
:attr:`FailedCellsKept.executed` and returns nbgrader's answer unchanged.

tests/test_upstream_grader.py fails if ``Validator._get_failed_cells`` is gone, takes other
parameters, or is no longer what ``validate`` calls.

Written against: nbgrader 0.9.6.
Upstream: no upstream issue; the hook is private.
"""

from __future__ import annotations

from nbformat.notebooknode import NotebookNode
from nbgrader.validator import Validator


class FailedCellsKept(Validator):
    """nbgrader's ``Validator``; after a run, :attr:`executed` holds (executed notebook,
    its failed cells) as nbgrader chose them, or None when nothing was executed."""

    executed: tuple[NotebookNode, list[NotebookNode]] | None = None

    def _get_failed_cells(self, nb: NotebookNode) -> list[NotebookNode]:
        failed = super()._get_failed_cells(nb)
        self.executed = (nb, failed)
        return failed
