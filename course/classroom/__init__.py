"""The classroom: widgets and pictures the notebooks use, with plain Python state to grade.

- :class:`CrashLab`: kill a CloudWave graph at a chosen node and crash point,
  resume it, and see the ledger, the verdict and a timeline of the runs.
- :class:`CompoundingExplorer`: sliders over p**n, the chance that a run of n
  steps succeeds when each step succeeds with chance p, with simulated points.
- :func:`success_rate`, :func:`simulate_success`, :func:`simulate_curve`: the
  formula and the simulation behind the explorer.
- :class:`ReplayStepper`: step through a recorded run (model version, transcript
  hash, tool inputs and outputs), the step where the model changed flagged.
- :class:`HistoryBrowser`: a slider over a thread's checkpoints (week 3).
- :class:`ApprovalPanel`: Approve / Reject with a reason for a paused thread (week 4).
- :func:`timeline_figure`, :func:`compounding_figure`: the two pictures as
  matplotlib Figures (save them with ``figure.savefig(path)``; no display needed).

May import: every layer below (it shows worlds, graphs and crashes). The names
below are imported on first use, so ``python -m course.classroom.lab`` starts fast.

- :mod:`course.classroom.lab`: ``make lab``, JupyterLab on the course;
  :mod:`course.classroom.contents`: the lab's notebooks not marked modified on opening.
- Where each widget lives: :mod:`course.classroom.crashlab`,
  :mod:`course.classroom.timeline`, :mod:`course.classroom.compounding`,
  :mod:`course.classroom.replay`, :mod:`course.classroom.history`,
  :mod:`course.classroom.approval`; :mod:`course.classroom._render` draws the figures
  without pyplot.

Widgets work without a front end (``nbclient``, tests): they are created and
updated, and every number they show is also an attribute.
"""

from importlib import import_module
from typing import Any

_HOMES = {
    "ApprovalPanel": "approval",
    "CompoundingExplorer": "compounding",
    "compounding_figure": "compounding",
    "simulate_curve": "compounding",
    "simulate_success": "compounding",
    "success_rate": "compounding",
    "CrashLab": "crashlab",
    "HistoryBrowser": "history",
    "verdict_line": "crashlab",
    "timeline_figure": "timeline",
    "ReplayStepper": "replay",
}

__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module 'course.classroom' has no attribute {name!r}")
    return getattr(import_module(f"course.classroom.{_HOMES[name]}"), name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_HOMES))
