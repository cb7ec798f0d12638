"""The crash harness: real SIGKILLs at named points, then resume in another process.

May import: every floor below (it runs CloudWave graphs against a world).

See :mod:`course.crash.harness` for the machinery and ``python -m course.crash``
for the command line (``matrix``, ``fuzz``); :mod:`course.crash.freeze` freezes a
worker (SIGSTOP) instead of killing it, and shows what fencing tokens prevent.
"""

from course.crash.freeze import FrozenChild, FrozenWorkerRun, freeze_here, frozen_worker_demo
from course.crash.harness import Attempt, CrashHarness, ScenarioResult, resolve_factory

__all__ = ["Attempt", "CrashHarness", "FrozenChild", "FrozenWorkerRun", "ScenarioResult",
           "freeze_here", "frozen_worker_demo", "resolve_factory"]
