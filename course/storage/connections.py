"""One database connection per (process, thread), never shared across ``fork``.

SQLite and psycopg connections must not be used by two processes, and SQLite's
not by two threads either. :class:`PerThreadConnections` opens one the first
time a process/thread asks, and forgets (without touching) the ones a forked
child inherited from its parent, so objects holding it can be created in a
notebook and handed to forked crash workers.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Generic, TypeVar

Conn = TypeVar("Conn")


class PerThreadConnections(Generic[Conn]):
    def __init__(self, open_connection: Callable[[], Conn],
                 is_usable: Callable[[Conn], bool] = lambda conn: True) -> None:
        self._open = open_connection
        self._is_usable = is_usable
        self._connections: dict[tuple[int, int], Conn] = {}

    def get(self) -> Conn:
        owner = (os.getpid(), threading.get_ident())
        conn = self._connections.get(owner)
        if conn is None or not self._is_usable(conn):
            if self._connections and next(iter(self._connections))[0] != owner[0]:
                self._connections = {}  # inherited through fork: the parent's, never touch them
            conn = self._open()
            self._connections[owner] = conn
        return conn

    def close(self) -> None:
        """Close this process's connections (other processes' are theirs to close)."""
        pid = os.getpid()
        for (owner_pid, _), conn in list(self._connections.items()):
            if owner_pid == pid:
                conn.close()  # type: ignore[attr-defined]
        self._connections = {}
