"""Step through a recorded run, one step at a time: the replay debugger.

:class:`ReplayStepper` takes the records of a run (a
:class:`~course.durable.replay.ReplayLog` or a list of records) and shows one
step: which model (name and version) decided, the hash of what it saw, the
tools it called with their inputs and what they returned. ``Previous`` /
``Next`` and the slider move through the run; the step where the model changed
under the run is flagged in red.

Everything the widget shows is plain Python too: :attr:`ReplayStepper.position`,
:meth:`ReplayStepper.current` and :attr:`ReplayStepper.table` (the same data
as :func:`course.durable.replay.replay_table`), which is what graded cells use.
"""

from __future__ import annotations

import html
import json
import weakref
from collections.abc import Iterable, Mapping
from typing import Any

import ipywidgets as widgets

from course.base.table import Table
from course.durable.replay import ReplayRecord, model_changes, replay_table


class ReplayStepper:
    """A slider over the steps of a recorded run (display ``.widget``, or the object itself)."""

    def __init__(self, records: Iterable[ReplayRecord | Mapping[str, Any]]) -> None:
        self.records = [r if isinstance(r, ReplayRecord) else ReplayRecord.from_dict(r)
                        for r in records]
        if not self.records:
            raise ValueError("nothing to replay: the run left no records (is the log empty?)")
        self.table: Table = replay_table(self.records)
        self.changed_at = {c.step: c for c in model_changes(self.records)}
        self.slider = widgets.IntSlider(value=0, min=0, max=len(self.records) - 1,
                                        description="record", continuous_update=False)
        self.back = widgets.Button(description="◀ previous")
        self.forward = widgets.Button(description="next ▶")
        self.view = widgets.HTML()
        self.widget = widgets.VBox([widgets.HBox([self.back, self.slider, self.forward]),
                                    self.view])
        me = weakref.ref(self)

        def moved(_change: object) -> None:
            stepper = me()
            if stepper is not None:
                stepper._show()

        self.slider.observe(moved, names="value")
        self.back.on_click(lambda _b: me() and me().go(me().position - 1))
        self.forward.on_click(lambda _b: me() and me().go(me().position + 1))
        self._show()

    @property
    def position(self) -> int:
        return int(self.slider.value)

    def go(self, position: int) -> ReplayRecord:
        """Move to record ``position`` (clamped to the run) and return it."""
        self.slider.value = max(0, min(len(self.records) - 1, position))
        return self.current()

    def current(self) -> ReplayRecord:
        return self.records[self.position]

    def describe(self) -> str:
        """The current step in words (what the widget shows, as text)."""
        r = self.current()
        lines = [f"step {r.step} ({r.node}) decided by {r.model_name} {r.model_version}",
                 f"transcript the model saw: sha256 {r.transcript_hash[:16]}…"]
        change = self.changed_at.get(r.step)
        if change is not None:
            lines.append(f"MODEL CHANGED here: {change.before} -> {change.after}")
        for call, result in zip(r.tool_calls, r.tool_results, strict=False):
            lines.append(f"called {call['name']}({json.dumps(call['args'], sort_keys=True)})"
                         f" -> {json.dumps(result, sort_keys=True, default=str)[:160]}")
        if r.reply:
            lines.append(f"answered: {r.reply}")
        return "\n".join(lines)

    def _show(self) -> None:
        text = html.escape(self.describe())
        flagged = "MODEL CHANGED" in text
        style = "color:#c62828;font-weight:bold" if flagged else ""
        self.view.value = f"<pre style='{style}'>{text}</pre>"

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)

    def __repr__(self) -> str:
        return self.describe()
