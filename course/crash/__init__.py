"""The crash harness: real SIGKILLs at named points, then resume in another process.

May import: every floor below (it runs CloudWave graphs against a world).

See :mod:`course.crash.harness` for the machinery and ``python -m course.crash``
for the command line (``matrix``). :mod:`course.crash.incidents` leaves a thread
killed with a charge in flight (and damages checkpoint files);
:mod:`course.crash.restart` is the container-restart drill on PostgreSQL.
"""

from course.crash.harness import Attempt, CrashHarness, ScenarioResult, resolve_factory
from course.crash.incidents import damage, kill_in_flight
from course.crash.restart import DrillResult, restart_drill

__all__ = ["Attempt", "CrashHarness", "DrillResult", "ScenarioResult", "damage",
           "kill_in_flight", "resolve_factory", "restart_drill"]
