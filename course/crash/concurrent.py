"""Many resumers, one crashed thread: exactly one resumes, the others are told why not.

:func:`resume_race` stages the scene and returns a :class:`RaceResult`:

1. **The crash.** A forked worker takes the thread's lease (every run of a
   thread does), starts the graph armed with a crash point (by default
   ``charge/after_effect``: the payment landed, LangGraph never heard) and is
   SIGKILLed there, still holding the lease.
2. **The race.** ``resumers`` processes (8 by default) are forked. Each opens
   its own world, checkpointer, guard store and lease store, then waits at a
   starting gun (a pipe the parent closes once all are ready), so every one
   of them asks for the lease at the same moment.
3. **The winner** takes the lease over from the dead worker, waits until every
   other resumer has had its answer (that keeps the race as tight as it can
   be), and resumes: ``graph.invoke(None, config, durability="sync")``. When
   the guard stops it with :class:`~course.durable.guard.NeedsReconcile`, it asks the
   provider about the key (:func:`~course.durable.guard.reconcile`) and resumes again.
   Then it gives the lease back.
4. **The others** get :class:`~course.durable.lease.InProgressElsewhere`: the outcome
   ``in_progress_elsewhere`` with its message, not a crash.

Two stores: ``"sqlite"`` (SqliteSaver, SQLite guard records and leases, all
files in the run folder) and ``"postgres"`` (PostgresSaver, :class:`~course.
idempotency_pg.PostgresStore` and :class:`~course.durable.lease.PostgresLeases` on the
server given by ``conninfo``). The billing simulator and the mail vendor are
SQLite files in both cases: they are the outside world.

With ``lease=False`` the resumers skip the lease and all resume at once: each
of them runs the unfinished nodes again. The guard and the provider's keys
still keep it to one charge and one email, but the work (and every
checkpoint write) is done once per resumer.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import tempfile
import time
import traceback
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from course.base import crashpoints, fork
from course.base.table import Table
from course.cloudwave.nodes import DEFAULT_MESSAGE
from course.crash.harness import Factory, resolve_factory
from course.crash.resume import SETTLED_ELSEWHERE, become_worker, reconcile_pending, thread_finished
from course.durable.guard import NeedsReconcile
from course.durable.lease import InProgressElsewhere, Lease, LeaseStore, SQLiteLeases
from course.durable.savers import CrashAwareSaver, crash_aware_postgres
from course.world import World
from course.world.billing import KeyInUse

STORES = ("sqlite", "postgres")
OUTCOMES = ("resumed", "in_progress_elsewhere", "nothing_to_do", "error", "killed")
BARRIER_TIMEOUT_S = 60.0
PROVIDER = {"in_flight_lease_s": 0.2}  # billing options in the workers (short in-flight lease)


@dataclass
class Resumer:
    """What one resumer process did."""

    index: int
    pid: int
    outcome: str  # one of OUTCOMES
    detail: str = ""
    reconciled: int = 0
    holder: str = ""  # for in_progress_elsewhere: who held the lease


@dataclass
class RaceResult:
    store: str
    thread_id: str
    crash: str  # "charge/after_effect"
    crashed: str  # what happened to the first run: "killed" is the plan
    stale_lease: Lease | None  # the lease the dead first run left behind
    resumers: list[Resumer]
    charges: int
    emails: int
    run_dir: Path
    seconds: float = 0.0

    def with_outcome(self, outcome: str) -> list[Resumer]:
        return [r for r in self.resumers if r.outcome == outcome]

    @property
    def winners(self) -> list[Resumer]:
        return self.with_outcome("resumed")

    @property
    def ok(self) -> bool:
        """One winner, no process crashed, one charge, one email."""
        return (len(self.winners) == 1 and not self.with_outcome("error")
                and not self.with_outcome("killed") and self.charges == 1 and self.emails == 1)

    def counts(self) -> dict[str, int]:
        return {o: len(self.with_outcome(o)) for o in OUTCOMES if self.with_outcome(o)}

    def table(self) -> Table:
        rows = [{"resumer": r.index, "pid": r.pid, "outcome": r.outcome,
                 "reconciled": r.reconciled, "note": _note(r)} for r in self.resumers]
        return Table(rows, ["resumer", "pid", "outcome", "reconciled", "note"],
                     title=f"{len(self.resumers)} resumers on {self.store}, crash at {self.crash}")

    def summary(self) -> str:
        counts = ", ".join(f"{n} {o}" for o, n in self.counts().items())
        return (f"{self.store}: first run {self.crashed} at {self.crash}; resumers: {counts}; "
                f"charges={self.charges} emails={self.emails} "
                f"({'ok' if self.ok else 'NOT OK'})")

    def _repr_html_(self) -> str:
        return f"<p>{self.summary()}</p>" + self.table()._repr_html_()

    def __str__(self) -> str:
        return f"{self.summary()}\n{self.table()}"


def resume_race(
    store: str = "sqlite",
    *,
    resumers: int = 8,
    node: str = "charge",
    point: str = "after_effect",
    conninfo: str | None = None,
    factory: Factory | str = "keyed",
    root: str | Path | None = None,
    ttl_s: float = 30.0,
    lease: bool = True,
    message: str = DEFAULT_MESSAGE,
    invoice_id: str = "inv_9",
) -> RaceResult:
    """Crash a thread once at ``node/point``, then let ``resumers`` processes resume it at once.

    Everything the run leaves (world files, worker log, SQLite checkpoints and leases) stays
    in ``result.run_dir`` for inspection, under ``root`` (a new temporary folder if not given).
    """
    if store not in STORES:
        raise ValueError(f"unknown store {store!r}; choose one of {', '.join(STORES)}")
    if store == "postgres" and not conninfo:
        raise ValueError("the postgres store needs conninfo (a PostgreSQL connection string)")
    if point not in crashpoints.POINTS:
        raise ValueError(f"unknown crash point {point!r}; "
                         f"choose one of {', '.join(crashpoints.POINTS)}")
    if not isinstance(resumers, int) or not 1 <= resumers <= 100:
        raise ValueError(f"resumers must be a whole number from 1 to 100, got {resumers!r}")
    build = resolve_factory(factory)
    base = Path(root) if root else Path(tempfile.mkdtemp(prefix="race-"))
    run_dir = base / f"race-{store}-{uuid.uuid4().hex[:8]}"
    run_dir.mkdir(parents=True)
    thread_id = f"race-{uuid.uuid4().hex[:10]}"
    backend = _Backend(store, run_dir, conninfo)
    backend.prepare()
    started = time.perf_counter()

    crashed = _run_first(backend, build, thread_id, message, (node, point))
    if crashed != "killed":
        raise RuntimeError(
            f"the first run was meant to die at {node}/{point} but it {crashed}: "
            f"is {node!r} a node of this graph that is reached? ({_tail(run_dir)})")
    leases = backend.leases()
    try:
        stale = leases.holder(thread_id)
    finally:
        leases.close()

    outcomes = _race(backend, build, thread_id, message, resumers, ttl_s, lease)
    world = World(run_dir)
    try:
        ledger = world.ledger()
        charges, emails = ledger.count("charges", invoice_id), ledger.count("emails", invoice_id)
    finally:
        world.close()
    return RaceResult(store, thread_id, f"{node}/{point}", crashed, stale, outcomes, charges,
                      emails, run_dir, time.perf_counter() - started)


def _note(resumer: Resumer) -> str:
    if resumer.outcome == "in_progress_elsewhere":
        return f"lease held by {resumer.holder!r}" if resumer.holder else "lease was taken"
    lines = resumer.detail.strip().splitlines()
    return lines[-1][:80] if lines else ""


# ------------------------------------------------------------------- backends
class _Backend:
    """Opens, in the calling process, what a run of the thread needs for one store."""

    def __init__(self, store: str, run_dir: Path, conninfo: str | None) -> None:
        self.store, self.run_dir, self.conninfo = store, run_dir, conninfo

    def prepare(self) -> None:
        """Create tables once, in the parent, so the racing children only read and write."""
        if self.store == "postgres":
            from course.durable.idempotency_pg import PostgresStore

            with self._pg_saver() as saver:
                saver.setup()
            PostgresStore(self.conninfo).close()
        self.leases().close()

    def world(self) -> World:
        world = World(self.run_dir, **PROVIDER)
        if self.store == "postgres":
            from course.durable.idempotency_pg import PostgresStore

            world.records.close()
            world.records = PostgresStore(self.conninfo)
        return world

    def saver(self) -> Any:
        if self.store == "sqlite":
            return CrashAwareSaver(self.run_dir / "checkpoints.db")
        return self._pg_saver()

    def _pg_saver(self) -> Any:
        return crash_aware_postgres(self.conninfo)

    def leases(self) -> LeaseStore:
        if self.store == "sqlite":
            return SQLiteLeases(self.run_dir / "leases.db")
        from course.durable.lease import PostgresLeases

        return PostgresLeases(self.conninfo)


# --------------------------------------------------------------- first run
def _run_first(backend: _Backend, build: Factory, thread_id: str, message: str,
               armed: tuple[str, str]) -> str:
    ended = _fork(backend.run_dir,
                  lambda: _first_run(backend, build, thread_id, message, armed)).wait()
    if ended.signal:
        return "killed"
    return "finished" if ended.code == 0 else "failed"


def _first_run(backend: _Backend, build: Factory, thread_id: str, message: str,
               armed: tuple[str, str]) -> int:
    world, saver, leases = backend.world(), backend.saver(), backend.leases()
    graph = build(world, saver)
    if not leases.acquire(thread_id, "first-run", ttl_s=300):
        raise RuntimeError("the first run could not take its own lease")
    crashpoints.arm(*armed)
    graph.invoke({"thread_id": thread_id, "message": message},
                 {"configurable": {"thread_id": thread_id}}, durability="sync")
    return 0  # not reached when the crash point fires


# -------------------------------------------------------------------- race
def _race(backend: _Backend, build: Factory, thread_id: str, message: str, count: int,
          ttl_s: float, lease: bool) -> list[Resumer]:
    ready, gun, tried, all_tried = os.pipe(), os.pipe(), os.pipe(), os.pipe()
    children: list[fork.Child] = []
    for index in range(1, count + 1):
        def child(index: int = index) -> int:
            os.close(ready[0])
            os.close(gun[1])
            os.close(tried[0])
            os.close(all_tried[1])
            return _resumer(backend, build, thread_id, message, index, ttl_s, lease,
                            ready[1], gun[0], tried[1], all_tried[0])
        children.append(_fork(backend.run_dir, child))
    for fd in (ready[1], gun[0], tried[1], all_tried[0]):
        os.close(fd)
    try:
        _gather(ready[0], children, "get ready")
        os.close(gun[1])  # bang: every resumer blocked on the gun wakes at once
        _gather(tried[0], children, "ask for the lease")
    except BaseException:
        for resumer in children:  # leave no resumer behind
            resumer.kill()
        raise
    finally:
        for fd in (ready[0], gun[1], tried[0], all_tried[1]):
            with contextlib.suppress(OSError):
                os.close(fd)  # closing all_tried lets the winner start its work
    results = []
    for index, resumer in enumerate(children, start=1):
        report = backend.run_dir / f"resumer-{index}.json"
        ended = resumer.wait()
        if ended.signal:
            results.append(Resumer(index, resumer.pid, "killed", ended.signal))
        elif report.exists():
            results.append(Resumer(**json.loads(report.read_text())))
        else:
            results.append(Resumer(index, resumer.pid, "error",
                                   f"exited with code {ended.code} without a report"))
    return results


def _gather(fd: int, children: list[fork.Child], what: str) -> None:
    """Wait until every child has written its number to ``fd``, or has died."""
    heard: set[int] = set()
    deadline = time.monotonic() + BARRIER_TIMEOUT_S
    while len(heard | {i for i, c in enumerate(children, start=1) if c.ended}) < len(children):
        if time.monotonic() > deadline:
            raise TimeoutError(f"resumers did not all {what} within {BARRIER_TIMEOUT_S:.0f} s")
        readable, _, _ = select.select([fd], [], [], 0.05)
        if readable:
            chunk = os.read(fd, 4 * len(children))  # records are 4 bytes, written atomically
            if not chunk:
                return  # every writer is gone
            heard.update(int(chunk[i:i + 4]) for i in range(0, len(chunk), 4))
        for child in children:
            child.poll()


def _say(fd: int, index: int) -> None:
    """Tell the parent this resumer reached the next step (one atomic 4-byte write)."""
    with contextlib.suppress(OSError):
        os.write(fd, f"{index:04d}".encode())


def _resumer(backend: _Backend, build: Factory, thread_id: str, message: str, index: int,
             ttl_s: float, lease: bool, ready: int, gun: int, tried: int,
             all_tried: int) -> int:
    report = Resumer(index, os.getpid(), "error")
    owner = f"resumer-{index}"
    signalled = False
    try:
        world, saver, leases = backend.world(), backend.saver(), backend.leases()
        graph = build(world, saver)
        config = {"configurable": {"thread_id": thread_id}}
        graph.get_state(config)  # warm every connection before the gun
        leases.holder(thread_id)
        _say(ready, index)
        os.read(gun, 1)  # returns (empty) when the parent closes its end: the gun
        if not lease:
            _say(tried, index)
            signalled = True
            report.outcome, report.reconciled = _resume(graph, config, world, thread_id,
                                                        message)
        else:
            try:
                with leases.hold(thread_id, owner, ttl_s):
                    _say(tried, index)
                    signalled = True
                    _wait_closed(all_tried)  # until every other resumer has its answer
                    report.outcome, report.reconciled = _resume(graph, config, world,
                                                                thread_id, message)
            except InProgressElsewhere as busy:
                if not signalled:
                    _say(tried, index)
                    signalled = True
                report.outcome, report.detail = "in_progress_elsewhere", str(busy)
                report.holder = busy.holder.owner if busy.holder else ""
    except BaseException:
        report.outcome, report.detail = "error", traceback.format_exc()
        if not signalled:
            _say(tried, index)
    (backend.run_dir / f"resumer-{index}.json").write_text(json.dumps(report.__dict__))
    return 0


def _resume(graph: Any, config: dict[str, Any], world: World, thread_id: str,
            message: str) -> tuple[str, int]:
    """Resume until the thread is finished, reconciling what the guard asks for."""
    reconciled = 0
    for _ in range(20):
        started = graph.get_state(config).created_at is not None
        if started and thread_finished(graph, config):
            return "nothing_to_do", reconciled  # finished already (by someone else)
        payload = None if started else {
            "thread_id": thread_id, "message": message}
        try:
            graph.invoke(payload, config, durability="sync")
            return "resumed", reconciled
        except NeedsReconcile as pending:
            reconcile_pending(world, pending.session_id, pending.step,
                              poll_s=PROVIDER["in_flight_lease_s"] / 4)
            reconciled += 1
        except KeyInUse:  # the provider is still on it: give it a moment
            time.sleep(PROVIDER["in_flight_lease_s"] / 4)
        except SETTLED_ELSEWHERE:  # another resumer finished this step first: look again
            continue
    raise RuntimeError(f"thread {thread_id!r} did not finish after 20 resumes")


def _wait_closed(fd: int) -> None:
    deadline = time.monotonic() + BARRIER_TIMEOUT_S
    while time.monotonic() < deadline:
        readable, _, _ = select.select([fd], [], [], 0.1)
        if readable and not os.read(fd, 64):
            return


# -------------------------------------------------------------------- fork
def _fork(run_dir: Path, body: Callable[[], int]) -> fork.Child:
    """``body`` in a forked worker whose output goes to ``run_dir``'s ``worker.log``."""
    def worker() -> int:
        become_worker(run_dir)
        return body()

    return fork.start(worker)


def _tail(run_dir: Path) -> str:
    try:
        lines = (run_dir / "worker.log").read_text().strip().splitlines()
    except FileNotFoundError:
        return "no worker log"
    return lines[-1] if lines else "worker log is empty"
