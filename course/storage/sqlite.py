"""One way to open SQLite for this course: safe across processes and crashes.

Every SQLite file in the course (billing, mail, idempotency records, outbox) is
opened through :func:`connect`, which promises:

- autocommit mode, so every transaction is explicit (``with transaction(conn):``);
- WAL journal and ``synchronous=FULL``: a committed row survives a SIGKILL;
- a busy timeout, so a second process waits for a lock instead of failing at once;
  a wait that runs out raises :class:`DatabaseBusy`, a sentence naming the file.

:class:`SqliteBacked` opens its file without any write transaction when its
schema is already there, so a process frozen in the middle of a write (it
holds the write lock) never stops another from opening the file and reading.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from course.storage.connections import PerThreadConnections


class DatabaseBusy(sqlite3.OperationalError):
    """A write waited for the whole busy timeout: another process holds the file's lock."""


def busy_error(conn: sqlite3.Connection, error: sqlite3.OperationalError) -> Exception:
    """``error`` as a sentence naming the file, if it is SQLite's bare "database is locked"."""
    if "locked" not in str(error) and "busy" not in str(error):
        return error
    try:
        path = next((row[2] for row in conn.execute("PRAGMA database_list")
                     if row[1] == "main"), "") or "(in memory)"
        waited = conn.execute("PRAGMA busy_timeout").fetchone()[0] / 1000
    except sqlite3.Error:
        path, waited = "(unknown file)", 0
    return DatabaseBusy(
        f"{path} stayed locked by another process for {waited:g} s (a writer that is frozen, "
        "stopped or very slow holds it); nothing was written here, so it is safe to try again")


def connect(path: str | Path, *, busy_timeout_ms: int = 10_000) -> sqlite3.Connection:
    """Open ``path`` (created if missing) in autocommit mode with WAL and FULL sync."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(str(path), isolation_level=None, timeout=busy_timeout_ms / 1000,
                           check_same_thread=False)  # closed from any thread; used by one
    conn.row_factory = sqlite3.Row
    conn.execute(f"PRAGMA busy_timeout={int(busy_timeout_ms)}")
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=FULL")
    return conn


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """``BEGIN IMMEDIATE`` … ``COMMIT``; roll back if the block raises.

    IMMEDIATE takes the write lock up front, so a read-then-write inside the
    block cannot race another process doing the same.
    """
    try:
        conn.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError as error:
        raise busy_error(conn, error) from None
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


class SqliteBacked:
    """Base for objects that keep SQLite connections and must survive ``fork`` and threads.

    A SQLite connection must never be shared by two processes or two threads.
    ``_conn`` opens one per (process, thread) the first time it is touched
    there, so a world created in a notebook can be handed to a forked crash
    worker, or used from LangGraph's worker threads, safely.
    """

    schema = ""
    busy_timeout_ms = 10_000
    # (table, column, declaration) added since a file may have been made: a file from
    # before gets them with ALTER TABLE (a write, only then)
    upgrades: tuple[tuple[str, str, str], ...] = ()

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._per_thread = PerThreadConnections(self._open)
        self._conn  # noqa: B018 - create the file and its schema now

    def _open(self) -> sqlite3.Connection:
        try:
            conn = connect(self.path, busy_timeout_ms=self.busy_timeout_ms)
        except sqlite3.OperationalError as error:
            raise DatabaseBusy(f"cannot open {self.path}: {error}") from None
        if self.schema and not self._schema_present(conn):
            try:  # one transaction: one fsync instead of one per statement
                conn.executescript(f"BEGIN IMMEDIATE;\n{self.schema}\nCOMMIT;")
            except sqlite3.OperationalError as error:
                raise busy_error(conn, error) from None
        for table, column, declaration in self.upgrades:
            if column not in {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}:
                with transaction(conn):
                    if column not in {row[1] for row in conn.execute(
                            f"PRAGMA table_info({table})")}:  # not added meanwhile
                        conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {declaration}")
        return conn

    def _schema_present(self, conn: sqlite3.Connection) -> bool:
        """Every table of the schema exists: a read, which no writer can block (WAL)."""
        wanted = set(re.findall(r"CREATE TABLE IF NOT EXISTS (\w+)", self.schema))
        have = {row[0] for row in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'")}
        return bool(wanted) and wanted <= have

    @property
    def _conn(self) -> sqlite3.Connection:
        return self._per_thread.get()

    def close(self) -> None:
        """Close this process's connections."""
        self._per_thread.close()
