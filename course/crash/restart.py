"""The container-restart drill: kill the worker, stop PostgreSQL, start it, resume the thread.

:func:`restart_drill` on a running :class:`~course.storage.postgres.TempPostgres`:

1. a fresh database holds the checkpoints (``PostgresSaver``) and the guard's
   records (:class:`~course.durable.idempotency_pg.PostgresStore`); the bank and
   the mail vendor stay SQLite files: they are the outside world, not ours;
2. a forked worker runs the graph armed with a crash point (by default
   ``charge/after_effect``: the bank charged, LangGraph never checkpointed the
   node) and is SIGKILLed there; the drill checks that it died of the kill;
3. the server is halted in ``immediate`` mode (no clean shutdown: the next
   start replays PostgreSQL's write-ahead log) and started again on the same data;
4. a brand-new saver, store and world (new connections, as a new container
   would open) resume the same ``thread_id`` with
   :func:`course.durable.actions.resume`.

It returns what the ledger says (charges, emails) and how long the halt and
the start took.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from course.base import crashpoints
from course.base.table import Table
from course.cloudwave.nodes import DEFAULT_MESSAGE
from course.crash.concurrent import _Backend, _fork
from course.crash.harness import Factory, resolve_factory
from course.durable.actions import resume


@dataclass
class DrillResult:
    graph: str
    thread_id: str
    killed_at: str
    worker: str  # "SIGKILL" when the kill landed
    halt_s: float
    start_s: float
    charges: int
    emails: int
    log: list[str]  # the state's log at the end: both processes' nodes, re-runs included
    run_dir: Path
    logged_before: int = 0  # how much of ``log`` the killed worker had checkpointed

    @property
    def resumed(self) -> list[str]:
        """The nodes the resume ran (after the restart, on new connections)."""
        return self.log[self.logged_before:]

    def table(self) -> Table:
        done = " → ".join(self.log[:self.logged_before]) or "nothing"
        return Table([{"step": "worker", "what happened": f"checkpointed {done}, then "
                       f"killed ({self.worker}) at {self.killed_at}"},
                      {"step": "postgres", "what happened": f"halted (immediate) in "
                       f"{self.halt_s:.2f} s, started again in {self.start_s:.2f} s"},
                      {"step": "resume", "what happened": "same thread, new connections; "
                       f"the resume ran: {' → '.join(self.resumed) or 'nothing'}"},
                      {"step": "ledger", "what happened": f"charges={self.charges} "
                       f"emails={self.emails}"}],
                     title=f"container restart drill: {self.graph} graph on PostgreSQL")

    def __str__(self) -> str:
        return str(self.table())

    def _repr_html_(self) -> str:
        return self.table()._repr_html_()


def restart_drill(server: Any, directory: str | Path, *, graph: Factory | str = "keyed",
                  node: str = "charge", point: str = "after_effect",
                  message: str = DEFAULT_MESSAGE, invoice_id: str = "inv_9") -> DrillResult:
    """Kill, halt PostgreSQL, start it, resume; see the module docstring."""
    if point not in crashpoints.POINTS:
        raise ValueError(f"unknown crash point {point!r}; "
                         f"choose one of {', '.join(crashpoints.POINTS)}")
    build = resolve_factory(graph)
    run_dir = Path(directory) / f"restart-{uuid.uuid4().hex[:8]}"
    run_dir.mkdir(parents=True)
    backend = _Backend("postgres", run_dir, server.new_database())
    backend.prepare()
    thread_id = f"restart-{uuid.uuid4().hex[:8]}"
    config = {"configurable": {"thread_id": thread_id}}

    def first_run() -> int:
        world = backend.world()
        with backend.saver() as saver:
            crashpoints.arm(node, point)
            build(world, saver).invoke({"thread_id": thread_id, "message": message}, config,
                                       durability="sync")
        return 0  # reached only if the crash point never fired

    ended = _fork(run_dir, first_run).wait()
    if not ended.killed:
        raise RuntimeError(f"the worker was meant to die at {node}/{point} but ended with "
                           f"{ended} (status {ended.status}): is {node!r} a node this graph "
                           "reaches?")
    started = time.perf_counter()
    server.halt("immediate")
    halted = time.perf_counter()
    server.resume_server()
    back = time.perf_counter()

    world = backend.world()  # new connections, as a restarted container opens them
    try:
        with backend.saver() as saver:
            resumed = build(world, saver)
            before = list(resumed.get_state(config).values.get("log", []))
            final = resume(resumed, config, store=world.records, lookup=world.find_listed)
        ledger = world.ledger()
    finally:
        world.records.close()
        world.close()
    return DrillResult(graph if isinstance(graph, str) else getattr(graph, "__name__", "custom"),
                       thread_id, f"{node}/{point}",
                       "SIGKILL", halted - started, back - halted,
                       ledger.count("charges", invoice_id), ledger.count("emails", invoice_id),
                       list(final.get("log", [])), run_dir, len(before))
