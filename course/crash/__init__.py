"""The crash harness: real SIGKILLs at named points, then resume in another process.

May import: every floor below (it runs CloudWave graphs against a world).

See :mod:`course.crash.harness` for the machinery and ``python -m course.crash``
for the command line (``matrix``), :mod:`course.crash.durability` for the harness in
another durability mode, :mod:`course.crash.restart` for "pause, kill, answer from a new
process" (week 4).
"""

from course.crash.durability import with_durability
from course.crash.harness import Attempt, CrashHarness, ScenarioResult, resolve_factory
from course.crash.restart import RestartResult, pause_then_resume

__all__ = ["Attempt", "CrashHarness", "RestartResult", "ScenarioResult", "pause_then_resume",
           "resolve_factory", "with_durability"]
