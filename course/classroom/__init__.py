"""The classroom: widgets and pictures the notebooks use, with plain Python state to grade.

- :class:`CrashLab`: kill a CloudWave graph at a chosen node and crash point,
  resume it, and see the ledger, the verdict and a timeline of the runs.
- :class:`CompoundingExplorer`: sliders over p**n, the chance that a run of n
  steps succeeds when each step succeeds with chance p, with simulated points.
- :func:`success_rate`, :func:`simulate_success`, :func:`simulate_curve`: the
  formula and the simulation behind the explorer.
- :func:`timeline_figure`, :func:`compounding_figure`: the two pictures as
  matplotlib Figures (save them with ``figure.savefig(path)``; no display needed).

Widgets work without a front end (``nbclient``, tests): they are created and
updated, and every number they show is also an attribute.
"""

from course.classroom.compounding import (
    CompoundingExplorer,
    compounding_figure,
    simulate_curve,
    simulate_success,
    success_rate,
)
from course.classroom.crashlab import CrashLab, verdict_line
from course.classroom.timeline import timeline_figure

__all__ = [
    "CompoundingExplorer",
    "CrashLab",
    "compounding_figure",
    "simulate_curve",
    "simulate_success",
    "success_rate",
    "timeline_figure",
    "verdict_line",
]
