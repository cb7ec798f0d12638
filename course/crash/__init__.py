"""The crash harness: real SIGKILLs at named points, then resume in another process.

May import: every floor below (it runs CloudWave graphs against a world).

See :mod:`course.crash.harness` for the machinery and ``python -m course.crash``
for the command line (``matrix``, ``fuzz``); :func:`final_state` reads what a scenario's
thread ended with. :mod:`course.crash.incidents` leaves a thread killed with a
charge in flight (and damages checkpoint files); :mod:`course.crash.restart` is the
container-restart drill on PostgreSQL; :mod:`course.crash.freeze` freezes a
worker (SIGSTOP) instead of killing it, and shows what fencing tokens prevent.
"""

from course.crash.freeze import FrozenChild, FrozenWorkerRun, freeze_here, frozen_worker_demo
from course.crash.harness import Attempt, CrashHarness, ScenarioResult, resolve_factory
from course.crash.incidents import damage, kill_in_flight
from course.crash.restart import DrillResult, restart_drill
from course.crash.state import final_state

__all__ = ["Attempt", "CrashHarness", "DrillResult", "FrozenChild", "FrozenWorkerRun",
           "ScenarioResult", "damage", "final_state", "freeze_here", "frozen_worker_demo",
           "kill_in_flight", "resolve_factory", "restart_drill"]
