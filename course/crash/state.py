"""What a crash scenario's thread ended with, read back from its checkpoints.

:func:`final_state` rebuilds the scenario's graph on its run directory (its world
and its checkpoint file) and returns the values of the thread's latest
checkpoint, so a lesson can show, for example, whether the charge the run ended
with came from the guard's record (``replayed=False``) or from the provider's
key check (``replayed=True``). It reads; it runs no node.
"""

from __future__ import annotations

from typing import Any

from course.crash.harness import CHECKPOINTS, CrashAwareSaver, CrashHarness, ScenarioResult
from course.world import World


def final_state(harness: CrashHarness, result: ScenarioResult) -> dict[str, Any]:
    """The thread's values in its latest checkpoint (an empty dict if it has none)."""
    world = World(result.run_dir)
    saver = CrashAwareSaver(result.run_dir / CHECKPOINTS)
    try:
        graph = harness.factory(world, saver)
        config = {"configurable": {"thread_id": result.thread_id}}
        return dict(graph.get_state(config).values)
    finally:
        world.close()
        saver.conn.close()
