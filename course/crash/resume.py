"""What every process that resumes a crashed CloudWave thread needs, in one place.

Used by the crash harness (one resumer after another) and by the concurrent
resumers (many at once), so a fix to "is this thread finished?" or to
reconciliation lands in both.

- :func:`become_worker`: a forked child sends its output to the run's
  ``worker.log`` (never into the parent's notebook or terminal) and starts
  with no crash point armed.
- :func:`thread_finished`: the thread ran to its end.
- :func:`reconcile_pending`: settle the guard's in-flight record, waiting
  while the provider still has the call in flight, by sending the same request
  again with the same key.
- :data:`SETTLED_ELSEWHERE`: the errors that mean "another process finished
  this step", which a resumer answers by resuming again, not by failing.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from pathlib import Path
from typing import Any

from course.base import crashpoints
from course.durable import StepSettledElsewhere, Superseded
from course.durable.guard import reconcile, record_id
from course.world import World
from course.world.billing import KeyInUse

# "Another process finished (or took over) this step": a resumer that meets one of these
# lost a race it had no need to win; it resumes again instead of failing.
SETTLED_ELSEWHERE = (StepSettledElsewhere, Superseded)


def become_worker(run_dir: Path) -> None:
    log = os.open(Path(run_dir) / "worker.log", os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    os.dup2(log, 1)
    os.dup2(log, 2)
    sys.stdout = sys.stderr = open(log, "w", buffering=1, closefd=False)  # noqa: SIM115
    crashpoints.disarm()


def thread_finished(graph: Any, config: dict[str, Any]) -> bool:
    """The thread ran to its end. ``next`` alone is not enough: a worker killed after a
    step's writes were saved but before that step's checkpoint leaves ``next == ()``
    with the finished task still listed in ``tasks``; such a run must be resumed."""
    snapshot = graph.get_state(config)
    return not snapshot.next and not snapshot.tasks


def reconcile_pending(world: World, session_id: str, step: str, *, poll_s: float,
                      fence: int | None = None) -> str:
    """``course.durable.guard.reconcile`` against the world, retried every ``poll_s`` while the
    provider answers :class:`KeyInUse` (the call is still being processed there).

    A money step is reconciled as with Stripe: the same request is sent again with the same
    key and the answer is read (``World.resend``). A step with no provider call (an email)
    is looked up by listing our own messages."""
    record = world.records.get(record_id(session_id, step))
    how: dict[str, Any] = {"lookup": world.find_listed}  # no arguments kept: list, do not send
    if record is not None and record.args is not None:
        with contextlib.suppress(ValueError):  # a step with no provider call: list
            how = {"fn": world.resend(step)}
    while True:
        try:
            return reconcile(session_id, step, store=world.records, fence=fence, **how)
        except KeyInUse:
            time.sleep(poll_s)
        except SETTLED_ELSEWHERE:
            return "settled_elsewhere"  # another resumer reconciled it first: nothing to do
