"""Storage plumbing: SQLite helpers, per-(process, thread) connections, a throwaway Postgres.

May import: :mod:`course.base`. Knows nothing about billing, keys or graphs.

- :mod:`course.storage.sqlite`: :func:`connect` (WAL, busy timeout),
  :func:`transaction` (``BEGIN IMMEDIATE`` ... commit), :class:`SqliteBacked`.
- :mod:`course.storage.connections`: :class:`PerThreadConnections`, one
  connection per (process, thread), shared by the SQLite and Postgres backends.
- :mod:`course.storage.checkout`: :func:`copy_tracked`, a repository's git-tracked
  files copied as a fresh clone has them.
- :mod:`course.storage.accounts`: the one unprivileged account (as root) and how to run
  a student's part as it; :mod:`course.storage.reach`: what that account may read of a
  private folder (only the paths listed, in a mount namespace of its own).
- :mod:`course.storage.postgres`: :class:`TempPostgres`, a real PostgreSQL 16
  started in a temporary folder (as root it runs as an unprivileged user).
"""

from course.storage.checkout import copy_tracked
from course.storage.connections import PerThreadConnections
from course.storage.postgres import PostgresUnavailable, TempPostgres, find_bindir
from course.storage.sqlite import SqliteBacked, connect, transaction

__all__ = ["PerThreadConnections", "PostgresUnavailable", "SqliteBacked", "TempPostgres",
           "connect", "copy_tracked", "find_bindir", "transaction"]
