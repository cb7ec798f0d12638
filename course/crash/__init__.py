"""The crash harness: real SIGKILLs at named points, then resume in another process.

May import: every floor below (it runs CloudWave graphs against a world).

- :mod:`course.crash.harness`: :class:`CrashHarness` (``python -m course.crash``
  for the ``matrix`` and ``fuzz`` commands); :func:`final_state` reads what a
  scenario's thread ended with.
  Its parts: :mod:`~course.crash.scenario` (attempts, and what workers left on disk),
  :mod:`~course.crash.timers` (kill or freeze a worker at a deadline),
  :mod:`~course.crash.worker` (what runs in the forked worker).
- :mod:`course.crash.fuzz`: kills at random instants (:mod:`~course.crash.fuzz_plan`
  draws them, :mod:`~course.crash.fuzz_lanes` runs them in parallel,
  :mod:`~course.crash.fuzz_report` counts what they caused).
- :mod:`course.crash.durability`: the harness with another durability mode (week 3).
- :mod:`course.crash.pause`: pause at an ``interrupt()``, kill, answer from a new
  process (week 4).
- :mod:`course.crash.incidents`: a thread killed with a charge in flight, damaged
  checkpoint files; :mod:`course.crash.restart`: the container-restart drill on
  PostgreSQL (week 6).
- :mod:`course.crash.concurrent`: two resumers racing for one crashed thread (week 6);
  :mod:`~course.crash.backends`: what its workers (and the drill's) open, per store.
- :mod:`course.crash.freeze`: freeze a worker (SIGSTOP) instead of killing it, and
  see what fencing tokens prevent.
- Shared by all of them: :mod:`course.crash.resume` (what every resuming process needs)
  and :mod:`course.crash.state` (a thread's final state, read from its checkpoints).
"""

from course.crash.concurrent import RaceResult, resume_race
from course.crash.durability import with_durability
from course.crash.freeze import FrozenChild, FrozenWorkerRun, freeze_here, frozen_worker_demo
from course.crash.harness import Attempt, CrashHarness, ScenarioResult, resolve_factory
from course.crash.incidents import damage, kill_in_flight
from course.crash.pause import RestartResult, pause_then_resume
from course.crash.restart import DrillResult, restart_drill
from course.crash.state import final_state

__all__ = ["Attempt", "CrashHarness", "DrillResult", "FrozenChild", "FrozenWorkerRun",
           "RaceResult", "RestartResult", "ScenarioResult", "damage", "final_state",
           "freeze_here", "frozen_worker_demo", "kill_in_flight", "pause_then_resume",
           "resolve_factory", "restart_drill", "resume_race", "with_durability"]
