"""A whole-notebook time budget, on top of nbgrader's per-cell limit.

:class:`NotebookBudget` keeps nbgrader's per-cell limit and adds ``notebook_budget``
seconds for the whole notebook: once it is spent, every remaining cell gets
``min_cell_s`` (a second by default) before it is stopped and graded as failed. One
student whose helper loops forever costs at most the budget plus a second per remaining
cell, and the cells that need no loop still score. ``COURSE_NOTEBOOK_BUDGET`` overrides
the budget. The budget reaches nbclient through
:mod:`course.sandbox.nbclient_cell_timeout` (its private per-cell timeout).
"""

from __future__ import annotations

import os
import time
from typing import Any

from traitlets import Float, Integer

from course.sandbox.nbclient_cell_timeout import CellTimeout


class NotebookBudget(CellTimeout):
    """nbclient's executor with a time budget for the whole notebook."""

    notebook_budget = Integer(
        0, help="seconds for the whole notebook (0: no budget, only the per-cell limit)",
    ).tag(config=True)
    min_cell_s = Float(1.0, help="time left to each cell once the budget is spent").tag(
        config=True)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._started = time.monotonic()
        self._cell_error = dict(self.error_on_timeout or {})

    def start_budget(self) -> None:
        """The notebook starts now: its budget counts from here."""
        self._started = time.monotonic()

    @property
    def budget_s(self) -> int:
        """``COURSE_NOTEBOOK_BUDGET`` if set, else ``notebook_budget``. Read when a cell
        starts, not in ``__init__``: nbgrader applies its configuration to a preprocessor
        again after building it, which put back the configured budget (120 s) over the
        variable's."""
        override = os.environ.get("COURSE_NOTEBOOK_BUDGET")
        return int(override) if override else self.notebook_budget

    def cell_time_limit(self, per_cell: int | None
                        ) -> tuple[int | None, dict[str, Any] | None]:
        budget = self.budget_s
        if not budget:
            return per_cell, None
        left = budget - (time.monotonic() - self._started)
        if per_cell is not None and per_cell <= left:
            return per_cell, self._cell_error
        return max(int(left), int(self.min_cell_s), 1), {
            "ename": "CellTimeoutError",
            "evalue": f"the notebook used up its {budget}-second budget, so this "
                      f"cell was stopped after {max(left, self.min_cell_s):.0f} s",
            "traceback": [f"CellTimeoutError: the whole notebook may run for "
                          f"{budget} seconds; it had used them up. Look for a "
                          "loop that never ends in a helper that several cells call."],
        }
