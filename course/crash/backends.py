"""What a forked worker of a race or a drill opens, for one store, and how it is forked.

:class:`_Backend` opens a world, a crash-point-aware checkpointer and a lease store on
SQLite files in the run folder, or on a PostgreSQL server (``"postgres"``); tables are
made once in the parent (:meth:`_Backend.prepare`). :func:`_fork` runs a body in a
forked worker whose output goes to the run folder's ``worker.log`` (:func:`_tail`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from course.base import fork
from course.crash.resume import become_worker
from course.durable.lease import LeaseStore, SQLiteLeases
from course.durable.savers import CrashAwareSaver, crash_aware_postgres
from course.world import World

PROVIDER = {"in_flight_lease_s": 0.2}  # billing options in the workers (short in-flight lease)


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
