"""Checkpointers that tell the crash points when a write record or a checkpoint is stored.

Promises: both savers here report each write record (``crashpoints.writes_saved``) and
each checkpoint (``crashpoints.checkpoint_written``) once it is stored, and store a
step's checkpoint only after its node's write record (langgraph issue 8039);
:func:`time_checkpoints` also stamps each checkpoint, as it lands, on a file.
:class:`CrashAwareSaver` (SQLite, on a file) is safe to build before ``fork``: each
process opens its own connection on first use. :func:`crash_aware_postgres` is the
``PostgresSaver`` one (needs the ``postgres`` extra; imported on first use).
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from langgraph.checkpoint.sqlite import SqliteSaver

from course.base import crashpoints

_timeline: tuple[int, int] | None = None  # (fd, attempt) of this process, once set


def time_checkpoints(fd: int, attempt: int) -> None:
    """From now on, in this process, write ``attempt<TAB>monotonic`` to ``fd`` per checkpoint."""
    global _timeline
    _timeline = (fd, attempt)


class _Reporting:
    """Mixed into a saver: tells the crash points what it stored."""

    def put_writes(self, config, writes, task_id, task_path=""):
        super().put_writes(config, writes, task_id, task_path)  # type: ignore[misc]
        crashpoints.writes_saved(task_path)

    def put(self, config, checkpoint, metadata, new_versions):
        crashpoints.await_writes()  # the node's write record first (langgraph issue 8039)
        saved = super().put(config, checkpoint, metadata, new_versions)  # type: ignore[misc]
        if _timeline is not None:  # one unbuffered write: a kill right after loses nothing
            os.write(_timeline[0], f"{_timeline[1]}\t{time.monotonic():.6f}\n".encode())
        crashpoints.checkpoint_written()
        return saved


class CrashAwareSaver(_Reporting, SqliteSaver):
    """A SqliteSaver on a file, safe to build before ``fork``, that tells the crash points
    when a checkpoint is on disk.

    ``conn`` is opened on first use in each process, so a graph compiled in
    the parent can be inherited by forked workers. Pass an open connection
    instead of a path to use it as it is (single process only).
    """

    def __init__(self, path_or_conn: str | Path | sqlite3.Connection) -> None:
        self._path = None if isinstance(path_or_conn, sqlite3.Connection) else Path(path_or_conn)
        self._conn_pid: int | None = None
        self._connection: sqlite3.Connection | None = None
        super().__init__(path_or_conn if self._path is None else None)  # type: ignore[arg-type]

    @property
    def conn(self) -> sqlite3.Connection:  # type: ignore[override]
        if self._connection is None or self._conn_pid != os.getpid():
            if self._path is None:
                raise RuntimeError("this saver's connection belongs to another process")
            self._connection = sqlite3.connect(self._path, check_same_thread=False)
            self._conn_pid = os.getpid()
            self.is_setup = False
            self.lock = threading.Lock()
        return self._connection

    @conn.setter
    def conn(self, value: sqlite3.Connection | None) -> None:
        self._connection = value
        self._conn_pid = os.getpid() if value is not None else None


def crash_aware_postgres(conninfo: str) -> Any:
    """A ``PostgresSaver`` on a new connection to ``conninfo`` that tells the crash points
    what it stored; a context manager that closes the connection."""
    import psycopg
    from langgraph.checkpoint.postgres import PostgresSaver
    from psycopg.rows import dict_row

    class CrashAwarePostgresSaver(_Reporting, PostgresSaver):
        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.conn.close()

    conn = psycopg.connect(conninfo, autocommit=True, prepare_threshold=0, row_factory=dict_row)
    return CrashAwarePostgresSaver(conn)
