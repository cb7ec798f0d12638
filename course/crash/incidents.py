"""Real incidents to recover from: a worker SIGKILLed with a charge in flight, a damaged
checkpoint file.

- :func:`kill_in_flight` runs the keyed CloudWave graph in a forked worker that
  dies (SIGKILL) right after the bank committed the charge and before the guard
  recorded the result: the guard's record is left ``in_flight``, the bank holds
  one charge, the checkpoint says ``charge`` is next. It checks that the kill
  landed there and raises otherwise.
- :func:`damage` cuts a checkpoint file short, as a full disk or a torn copy would.

Resume such a thread with the ordinary ``keyed_graph``: its ``charge`` node has
the same name, the same key and the same guard record.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from course.base import crashpoints, fork
from course.cloudwave.graph import build_graph
from course.cloudwave.nodes import DEFAULT_MESSAGE, KEYED_NODES
from course.crash.harness import CHECKPOINTS, CrashAwareSaver
from course.crash.resume import become_worker
from course.durable.actions import in_flight
from course.durable.guard import guarded
from course.world import World


def _charge_then_die(state: dict[str, Any], world: Any) -> dict[str, Any]:
    """``charge_keyed`` whose process is killed between the bank's 200 and the guard's record."""
    args = {"customer_id": state["customer_id"], "invoice_id": state["invoice_id"],
            "cents": state["cents"], "currency": state["currency"]}

    def capture(idem_key: str, **kwargs: Any) -> dict[str, Any]:
        world.billing.charge(**kwargs, idempotency_key=idem_key)
        crashpoints.die()  # the 200 arrived; the guard never hears of it
        raise AssertionError("unreachable: the process was killed")

    guarded(state["thread_id"], "charge", capture, args, store=world.records)
    raise AssertionError("unreachable")


def kill_in_flight(directory: str | Path, thread_id: str = "incident-1",
                   message: str = DEFAULT_MESSAGE) -> Path:
    """Run the keyed graph in a worker killed mid-charge; return the checkpoint file's path."""
    directory = Path(directory)
    world = World(directory)
    world.close()
    saver = CrashAwareSaver(directory / CHECKPOINTS)
    graph = build_graph({**KEYED_NODES, "charge": _charge_then_die}, world=world,
                        checkpointer=saver)
    config = {"configurable": {"thread_id": thread_id}}
    def worker() -> None:
        become_worker(directory)
        graph.invoke({"thread_id": thread_id, "message": message}, config,
                     durability="sync")
        raise AssertionError("the worker lived through the charge")

    ended = fork.start(worker).wait()
    if not ended.killed:
        raise RuntimeError(f"the worker was not killed mid-charge (it ended: {ended}, wait "
                           f"status {ended.status}); see {directory / 'worker.log'}")
    check = World(directory)
    try:
        if in_flight(check.records, thread_id) != ["charge"] or len(check.billing.charges()) != 1:
            raise RuntimeError("the kill did not land between the charge and its record")
    finally:
        check.close()
    return directory / CHECKPOINTS


def damage(path: str | Path, keep: float = 0.5) -> int:
    """Cut ``path`` to ``keep`` of its length (at least one byte gone); return the new size."""
    path = Path(path)
    size = path.stat().st_size
    new = min(size - 1, int(size * keep))
    with path.open("r+b") as file:
        file.truncate(new)
    return new
