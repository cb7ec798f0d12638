"""A state-history browser: a slider over a thread's checkpoints, oldest to newest.

Promises:
- :class:`HistoryBrowser` shows a slider (one position per checkpoint, oldest
  on the left) and, for the chosen checkpoint, its step, its source, the node
  whose writes it saved, what would run next, and its values. The input checkpoint
  (step -1) holds none of the run's values yet (only the state's empty defaults, such as
  ``log: []``): its row's ``input`` is the input the run was given,
  saved beside it as the input's write record, and the browser shows it.
- The same data is plain Python: ``browser.rows`` (oldest first, from
  :func:`course.cloudwave.checkpoints.history_rows`, plus ``input``: the input
  for an input checkpoint, else ``None``), ``browser.selected`` (the
  row under the slider), ``browser.table()`` (a :class:`course.base.Table`).
  Grade those, not the widgets.
- :meth:`HistoryBrowser.refresh` re-reads the history (after a resume or a fork).
"""

from __future__ import annotations

import html
import json
from typing import Any

import ipywidgets as widgets

from course.base.table import Table
from course.cloudwave.checkpoints import COLUMNS, history_rows


class HistoryBrowser(widgets.VBox):
    def __init__(self, graph: Any, config: dict[str, Any]) -> None:
        self.graph, self.config = graph, config
        self.slider = widgets.IntSlider(description="checkpoint", min=0, max=0,
                                        continuous_update=True)
        self.detail = widgets.HTML()
        self.rows: list[dict[str, Any]] = []
        super().__init__([self.slider, self.detail])
        self.slider.observe(lambda _change: self._show(), names="value")
        self.refresh()

    def refresh(self) -> None:
        """Read the thread's history again and put the slider on the newest checkpoint."""
        self.rows = list(reversed(history_rows(self.graph, self.config)))
        for row in self.rows:
            row["input"] = self._input_of(row) if row["source"] == "input" else None
        if not self.rows:
            raise ValueError(f"thread {self.config['configurable']['thread_id']!r} has no "
                             "checkpoints yet: invoke the graph with this config first")
        self.slider.max = len(self.rows) - 1
        self.slider.value = self.slider.max
        self._show()

    @property
    def selected(self) -> dict[str, Any]:
        return self.rows[self.slider.value]

    def select(self, index: int) -> dict[str, Any]:
        """Move the slider (0 = oldest); returns the row it shows."""
        if not 0 <= index < len(self.rows):
            raise ValueError(f"choose a checkpoint from 0 to {len(self.rows) - 1}, not {index}")
        self.slider.value = index
        return self.selected

    def table(self) -> Table:
        short = ("checkpoint_id", "parent_id")
        return Table([{c: r[c][-8:] if c in short else r[c] for c in COLUMNS} for r in self.rows],
                     COLUMNS, title="checkpoints, oldest first (ids: last 8 characters)")

    def _input_of(self, row: dict[str, Any]) -> Any:
        """The input saved beside an input checkpoint (its ``__start__`` task's writes)."""
        tasks = self.graph.get_state(row["config"]).tasks
        return next((task.result for task in tasks if task.name == "__start__"), None)

    def _show(self) -> None:
        row = self.selected
        values = json.dumps(row["values"], indent=1, default=str, sort_keys=True)
        given = ""
        if row["input"] is not None:
            shown = json.dumps(row["input"], indent=1, default=str, sort_keys=True)
            given = ("input (saved beside this checkpoint, not yet in its values):"
                     f"<pre style='max-height:16em;overflow:auto'>{html.escape(shown)}</pre>")
        self.detail.value = (
            f"<b>step {row['step']}</b> ({html.escape(row['source'])}) after "
            f"<b>{html.escape(row['after'])}</b>; next: <b>{html.escape(row['next'])}</b>"
            f"<br><code>{html.escape(row['checkpoint_id'])}</code>{given}values:"
            f"<pre style='max-height:16em;overflow:auto'>{html.escape(values)}</pre>")
