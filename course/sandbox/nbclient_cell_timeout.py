"""nbclient's private per-cell timeout, turned into a hook the notebook budget uses.

What it works around: nbclient times each cell on its own (``timeout``, or
``timeout_func``) and has no limit for the whole notebook (nbclient issue #212, nbconvert
issue #1784, both open). It asks ``self._get_timeout(cell)`` for a cell's limit just
before the cell runs, and when the cell goes past it (with ``interrupt_on_timeout``)
reads ``self.error_on_timeout`` for the error it records. :class:`CellTimeout`
overrides ``_get_timeout``, and only it, here: :meth:`~CellTimeout.cell_time_limit`
gets nbclient's own limit and may give a shorter one with the error to record
(:class:`course.sandbox.budget.NotebookBudget`).

Written against: nbclient 0.11.0.
Upstream: https://github.com/jupyter/nbclient/issues/212 (a total notebook timeout);
``_get_timeout`` itself is private. tests/test_upstream_sandbox.py fails when it changes
underneath.
"""

from __future__ import annotations

from typing import Any

from nbclient import NotebookClient
from nbformat import NotebookNode


class CellTimeout(NotebookClient):
    """A ``NotebookClient`` whose private per-cell timeout asks :meth:`cell_time_limit`."""

    def _get_timeout(self, cell: NotebookNode | None) -> int | None:
        limit, error = self.cell_time_limit(super()._get_timeout(cell))
        if error is not None:
            self.error_on_timeout = error
        return limit

    def cell_time_limit(self, per_cell: int | None
                        ) -> tuple[int | None, dict[str, Any] | None]:
        """The next cell's limit in seconds (None: none), given nbclient's own
        ``per_cell``, and the error to record when the cell goes past it (None: leave
        ``error_on_timeout`` as it is)."""
        return per_cell, None
