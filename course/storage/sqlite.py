"""One way to open SQLite for this course: safe across processes and crashes.

Every SQLite file in the course (billing, mail, idempotency records, outbox) is
opened through :func:`connect`, which promises:

- autocommit mode, so every transaction is explicit (``with transaction(conn):``);
- WAL journal and ``synchronous=FULL``: a committed row survives a SIGKILL;
- a busy timeout, so a second process waits for a lock instead of failing at once.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from course.storage.connections import PerThreadConnections


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
    conn.execute("BEGIN IMMEDIATE")
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

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._per_thread = PerThreadConnections(self._open)
        self._conn  # noqa: B018 - create the file and its schema now

    def _open(self) -> sqlite3.Connection:
        conn = connect(self.path)
        if self.schema:  # one transaction: one fsync instead of one per statement
            conn.executescript(f"BEGIN IMMEDIATE;\n{self.schema}\nCOMMIT;")
        return conn

    @property
    def _conn(self) -> sqlite3.Connection:
        return self._per_thread.get()

    def close(self) -> None:
        """Close this process's connections."""
        self._per_thread.close()
