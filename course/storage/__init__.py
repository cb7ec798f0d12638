"""Storage plumbing: SQLite helpers, per-(process, thread) connections, a throwaway Postgres.

May import: :mod:`course.base`, :mod:`course.host` (the account Postgres runs as as root).
Knows nothing about billing, keys or graphs.

- :mod:`course.storage.sqlite`: :func:`connect` (WAL, busy timeout),
  :func:`transaction` (``BEGIN IMMEDIATE`` ... commit), :class:`SqliteBacked`.
- :mod:`course.storage.connections`: :class:`PerThreadConnections`, one
  connection per (process, thread), shared by the SQLite and Postgres backends.
- :mod:`course.storage.postgres`: :class:`TempPostgres`, a real PostgreSQL 18
  started in a temporary folder (as root it runs as an unprivileged user).
"""

from course.storage.connections import PerThreadConnections
from course.storage.postgres import PostgresUnavailable, TempPostgres, find_bindir
from course.storage.sqlite import SqliteBacked, connect, transaction

__all__ = ["PerThreadConnections", "PostgresUnavailable", "SqliteBacked", "TempPostgres",
           "connect", "find_bindir", "transaction"]
