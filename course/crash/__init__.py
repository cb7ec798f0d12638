"""The crash harness: real SIGKILLs at named points, then resume in another process.

May import: every floor below (it runs CloudWave graphs against a world).

See :mod:`course.crash.harness` for the machinery and ``python -m course.crash``
for the command line (``matrix``); :func:`final_state` reads what a scenario's
thread ended with.
"""

from course.crash.harness import Attempt, CrashHarness, ScenarioResult, resolve_factory
from course.crash.state import final_state

__all__ = ["Attempt", "CrashHarness", "ScenarioResult", "final_state", "resolve_factory"]
