"""Thread leases: at most one process works on a conversation at a time.

After a crash, several things may try to resume the same thread at once: a
retry loop, a cron job, an operator, a second pod. The guard already stops a
double charge, but two resumers still trip over each other (both reconcile,
both write checkpoints, one of them fails with a confusing error). A lease
settles it before any work starts: one resumer wins, the others are told,
in words, that the thread is in progress elsewhere.

One interface, :class:`LeaseStore`, two backends: :class:`SQLiteLeases` (a
file shared by the processes of one machine) and :class:`PostgresLeases`
(one table shared by every machine). Both pass the same conformance suite
(``tests/test_lease_conformance.py``). What each method promises:

- :meth:`~LeaseStore.acquire` ``(thread_id, owner, ttl_s) -> bool`` is atomic
  across processes: of any number of callers racing for a free lease exactly
  one gets ``True``. It takes the lease when nobody holds it, when the
  holder's time ran out, when the holder is a process on this machine that no
  longer exists (the crash case: a SIGKILLed worker never releases anything),
  or when ``owner`` already holds it (then the lease is renewed for ``ttl_s``
  more seconds). It returns ``False`` while someone else, alive, holds it.
- :meth:`~LeaseStore.release` ``(thread_id, owner) -> bool`` gives the lease
  back if ``owner`` holds it, and touches nothing otherwise.
- :meth:`~LeaseStore.holder` tells who holds a thread's lease (a :class:`Lease`).
- :meth:`~LeaseStore.hold` is the usual way to use it: a ``with`` block that
  acquires or raises :class:`InProgressElsewhere`, yields the :class:`Lease`,
  and releases at the end.
- **Fencing tokens.** Every new grant of a thread's lease carries a token one
  larger than any earlier grant of that thread (a renewal keeps its token; a
  release does not reset the count). :meth:`~LeaseStore.check` raises
  :class:`LeaseLost` for a holder whose token is no longer the current one.

A lease with a time limit cannot, on its own, stop a holder that was *paused*
(SIGSTOP, a long GC pause, a VM migration) past its time: the holder wakes up
still believing it holds the lease. That is why each write a holder makes
carries its token (``guarded(..., fence=lease.fence)``) and the store that
takes the write refuses an old token in the same transaction.

Owner names must be unique among live processes (for example ``"resumer-3"``
or ``f"{socket.gethostname()}:{os.getpid()}"``); the process id and host are
recorded next to the name, so a dead holder can be recognised.
"""

from __future__ import annotations

import math
import os
import socket
import time
from abc import ABC, abstractmethod
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from course.storage.sqlite import SqliteBacked, transaction


@dataclass(frozen=True)
class Lease:
    """Who holds a thread: the owner's name, its process id and host, and until when."""

    thread_id: str
    owner: str
    pid: int
    host: str
    started: str  # the process's start time (Linux), so a reused pid is not mistaken for it
    expires_at: float  # seconds since the epoch, on the store's clock
    fence: int = 0  # the grant's fencing token: larger for every new holder of the thread

    def holder_alive(self) -> bool:
        """False if the holder is a process on this machine that is gone (or a zombie)."""
        if self.host != socket.gethostname():
            return True  # another machine: only the time limit can tell
        return process_alive(self.pid, self.started)


class InProgressElsewhere(Exception):
    """Someone else holds the thread's lease: this process must leave the thread alone."""

    def __init__(self, thread_id: str, owner: str, holder: Lease | None,
                 now: float | None = None) -> None:
        self.thread_id = thread_id
        self.owner = owner  # who asked
        self.holder = holder  # who has it (None if it was released a moment ago)
        if holder is None:
            text = (f"thread {thread_id!r} was being worked on by another process a moment "
                    f"ago, so {owner!r} left it alone; check the thread's state before "
                    "trying again")
        else:
            left = max(0.0, holder.expires_at - (time.time() if now is None else now))
            text = (f"thread {thread_id!r} is in progress elsewhere: {holder.owner!r} "
                    f"(pid {holder.pid} on {holder.host}) holds its lease for {left:.0f} s "
                    f"more, so {owner!r} left it alone. Nothing was done twice; if the "
                    "thread is still unfinished when that lease runs out, try again")
        super().__init__(text)


class LeaseLost(Exception):
    """A holder's lease on a thread was given to someone else (its time ran out while it was
    paused): whatever it was about to write must not be written."""

    def __init__(self, thread_id: str, owner: str, fence: int, current: Lease | None) -> None:
        now = ("nobody holds it now" if current is None else
               f"{current.owner!r} holds it now with token {current.fence}")
        super().__init__(
            f"{owner!r} lost its lease on thread {thread_id!r} (token {fence}) while it was "
            f"paused or slow; {now}. Its writes are refused: another process owns the thread")
        self.thread_id = thread_id
        self.owner = owner
        self.fence = fence
        self.current = current


class LeaseStore(ABC):
    """Leases on thread ids, shared by every process that opens the same store."""

    @abstractmethod
    def acquire(self, thread_id: str, owner: str, ttl_s: float) -> bool: ...

    @abstractmethod
    def release(self, thread_id: str, owner: str) -> bool: ...

    @abstractmethod
    def holder(self, thread_id: str) -> Lease | None: ...

    def now(self) -> float:
        """The store's clock (seconds since the epoch): leases expire by it."""
        return time.time()

    def check(self, thread_id: str, owner: str, fence: int) -> None:
        """Raise :class:`LeaseLost` unless ``owner`` still holds the thread with token ``fence``
        and its time has not run out."""
        current = self.holder(thread_id)
        if (current is None or current.owner != owner or current.fence != fence
                or current.expires_at <= self.now()):
            raise LeaseLost(thread_id, owner, fence, current)

    @contextmanager
    def hold(self, thread_id: str, owner: str, ttl_s: float = 60.0) -> Iterator[Lease]:
        """Hold the lease for the block (it is yielded, with its fencing token), or raise
        :class:`InProgressElsewhere` at once."""
        if not self.acquire(thread_id, owner, ttl_s):
            raise InProgressElsewhere(thread_id, owner, self.holder(thread_id), self.now())
        try:
            lease = self.holder(thread_id)
            assert lease is not None
            yield lease
        finally:
            self.release(thread_id, owner)

    def close(self) -> None:  # noqa: B027 - a backend that holds nothing need not override
        """Release connections."""

    # ----------------------------------------------------------- shared rules
    @staticmethod
    def _check(thread_id: str, owner: str, ttl_s: float) -> None:
        for name, value in (("thread_id", thread_id), ("owner", owner)):
            if not isinstance(value, str) or not value:
                raise ValueError(f"{name} must be a non-empty string, got {value!r}")
        if (isinstance(ttl_s, bool) or not isinstance(ttl_s, int | float)
                or not math.isfinite(ttl_s) or ttl_s <= 0):
            raise ValueError(f"ttl_s must be a positive number of seconds, got {ttl_s!r}")

    @staticmethod
    def _may_take(current: Lease | None, owner: str, now: float) -> bool:
        return (current is None or current.owner == owner or current.expires_at <= now
                or not current.holder_alive())


def me() -> tuple[int, str, str]:
    """This process: (pid, host, start time)."""
    pid = os.getpid()
    return pid, socket.gethostname(), process_start(pid)


def process_start(pid: int) -> str:
    """The start time of ``pid`` in clock ticks since boot (Linux), or "" where unknown."""
    stat = _proc_stat(pid)
    return stat[19] if stat else ""


def process_alive(pid: int, started: str = "") -> bool:
    """Is ``pid`` a live process (not a zombie) and, if ``started`` is given, the same one?"""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # it exists, under another user
    stat = _proc_stat(pid)
    if stat is None:
        return not Path("/proc/self/stat").exists()  # no /proc: trust kill(); else it just went
    if stat[0] == "Z":
        return False  # killed, not yet reaped by its parent
    return not started or stat[19] == started


def _proc_stat(pid: int) -> list[str] | None:
    """Fields 3.. of /proc/<pid>/stat (state first), or None."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return raw[raw.rindex(")") + 2:].split()


# ------------------------------------------------------------------------ SQLite
_SQLITE_SCHEMA = """
CREATE TABLE IF NOT EXISTS thread_leases (
    thread_id TEXT PRIMARY KEY, owner TEXT NOT NULL, pid INTEGER NOT NULL, host TEXT NOT NULL,
    started TEXT NOT NULL, expires_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS lease_fences (thread_id TEXT PRIMARY KEY, fence INTEGER NOT NULL);
"""


class SQLiteLeases(SqliteBacked, LeaseStore):
    """Leases in a SQLite file: for processes on one machine."""

    schema = _SQLITE_SCHEMA

    def acquire(self, thread_id: str, owner: str, ttl_s: float) -> bool:
        self._check(thread_id, owner, ttl_s)
        pid, host, started = me()
        with transaction(self._conn):  # BEGIN IMMEDIATE: one acquirer at a time
            now = time.time()
            current = self._read(thread_id)
            if not self._may_take(current, owner, now):
                return False
            if current is None or current.owner != owner:  # a new grant: the next token
                self._conn.execute(
                    "INSERT INTO lease_fences VALUES (?, 1) "
                    "ON CONFLICT(thread_id) DO UPDATE SET fence = fence + 1", (thread_id,))
            self._conn.execute(
                "INSERT OR REPLACE INTO thread_leases VALUES (?, ?, ?, ?, ?, ?)",
                (thread_id, owner, pid, host, started, now + ttl_s))
        return True

    def release(self, thread_id: str, owner: str) -> bool:
        with transaction(self._conn):
            cur = self._conn.execute(
                "DELETE FROM thread_leases WHERE thread_id = ? AND owner = ?", (thread_id, owner))
        return cur.rowcount == 1

    def holder(self, thread_id: str) -> Lease | None:
        return self._read(thread_id)

    def _read(self, thread_id: str) -> Lease | None:
        row = self._conn.execute(
            "SELECT l.*, COALESCE(f.fence, 0) AS fence FROM thread_leases l "
            "LEFT JOIN lease_fences f USING (thread_id) WHERE l.thread_id = ?",
            (thread_id,)).fetchone()
        return None if row is None else Lease(**dict(row))


# ---------------------------------------------------------------------- Postgres
_PG_SCHEMA = """
CREATE TABLE IF NOT EXISTS {table} (
    thread_id TEXT PRIMARY KEY, owner TEXT NOT NULL, pid INTEGER NOT NULL, host TEXT NOT NULL,
    started TEXT NOT NULL, expires_at DOUBLE PRECISION NOT NULL);
CREATE TABLE IF NOT EXISTS {fences} (thread_id TEXT PRIMARY KEY, fence BIGINT NOT NULL)
"""
_PG_NOW = "extract(epoch from clock_timestamp())::double precision"


class PostgresLeases(LeaseStore):
    """Leases in a PostgreSQL table, ``thread_leases`` (in ``schema`` if given); time is the
    server's clock."""

    def __init__(self, conninfo: str, *, schema: str | None = None) -> None:
        from psycopg import sql

        from course.durable.idempotency_pg import PgConnections, qualified

        self._sql_mod = sql
        self._pg = PgConnections(conninfo)
        self._table = qualified(schema, "thread_leases")
        self._fences = qualified(schema, "lease_fences")
        conn = self._pg.conn
        with conn.transaction():
            if schema is not None:
                conn.execute(
                    sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(schema)))
            for statement in _PG_SCHEMA.split(";"):
                conn.execute(sql.SQL(statement).format(table=self._table, fences=self._fences))

    def _q(self, text: str) -> Any:
        return self._sql_mod.SQL(text.replace("{now}", _PG_NOW)).format(
            table=self._table, fences=self._fences)

    def now(self) -> float:
        return float(self._pg.conn.execute(f"SELECT {_PG_NOW} AS now").fetchone()["now"])

    def acquire(self, thread_id: str, owner: str, ttl_s: float) -> bool:
        self._check(thread_id, owner, ttl_s)
        pid, host, started = me()
        values = (thread_id, owner, pid, host, started, float(ttl_s))
        conn = self._pg.conn
        while True:
            with conn.transaction():
                if conn.execute(self._q(
                        "INSERT INTO {table} VALUES (%s, %s, %s, %s, %s, {now} + %s) "
                        "ON CONFLICT (thread_id) DO NOTHING RETURNING thread_id"),
                        values).fetchone():
                    self._next_fence(thread_id)
                    return True
                row = conn.execute(self._q(
                    "SELECT *, {now} AS now FROM {table} WHERE thread_id = %s FOR UPDATE"),
                    (thread_id,)).fetchone()
                if row is None:
                    continue  # released between the two statements: try again
                now = row.pop("now")
                if not self._may_take(Lease(**row), owner, now):
                    return False
                if row["owner"] != owner:
                    self._next_fence(thread_id)
                conn.execute(self._q(
                    "UPDATE {table} SET owner = %s, pid = %s, host = %s, started = %s, "
                    "expires_at = {now} + %s WHERE thread_id = %s"),
                    (owner, pid, host, started, float(ttl_s), thread_id))
                return True

    def _next_fence(self, thread_id: str) -> None:
        """Inside the granting transaction (the lease row is locked): the next token."""
        self._pg.conn.execute(self._q(
            "INSERT INTO {fences} VALUES (%s, 1) "
            "ON CONFLICT (thread_id) DO UPDATE SET fence = {fences}.fence + 1"), (thread_id,))

    def release(self, thread_id: str, owner: str) -> bool:
        cur = self._pg.conn.execute(
            self._q("DELETE FROM {table} WHERE thread_id = %s AND owner = %s"), (thread_id, owner))
        return cur.rowcount == 1

    def holder(self, thread_id: str) -> Lease | None:
        row = self._pg.conn.execute(self._q(
            "SELECT l.*, COALESCE(f.fence, 0) AS fence FROM {table} l "
            "LEFT JOIN {fences} f USING (thread_id) WHERE l.thread_id = %s"),
            (thread_id,)).fetchone()
        return None if row is None else Lease(**row)

    def close(self) -> None:
        self._pg.close()
