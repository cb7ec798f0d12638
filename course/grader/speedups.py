"""nbgrader's fixed costs that are overhead, not grading, cut without changing a result.

Measured on a 2-core machine while grading week 5 (``python -m bench --only grading``),
each of these cost more than a second per ``make check`` or per grading group, for
nothing a grade depends on:

- **The gradebook's alembic revision by subprocess.** A new gradebook asks
  ``nbgrader.api.get_alembic_version`` for the newest migration, which starts the
  ``alembic heads`` program. :func:`install` has nbgrader answer the same question in
  this process (:mod:`course.grader.nbgrader_alembic_heads`, where that private hook
  lives).
- **An fsync per cell in a throwaway gradebook.** nbgrader commits after nearly every
  cell it records (about 130 commits to register week 5, more per graded notebook);
  SQLite's default (rollback journal, ``synchronous=FULL``) makes each one create and
  delete a journal file and wait for the disk. :func:`throwaway_gradebook` sets
  ``journal_mode=MEMORY`` and ``synchronous=OFF`` on every SQLite connection to a
  database inside one folder (the throwaway course ``make check`` and each ``make
  grade`` group build and delete afterwards), and only there: a crash of the process
  loses that folder anyway, and the repository's gradebook keeps SQLite's defaults.

- **A JSON-schema check per cell.** :func:`lighten` gives a converter that lists
  nbgrader's ``CheckCellMetadata`` (``generate_assignment`` does, twice) the course's
  :class:`course.grader.nbgrader_schema_once.CheckCellMetadata`: the same checks, the
  schema checked once per process (``nbgrader_config.py`` names it for autograde).

The two nbgrader hooks live in their own modules; what is left here is SQLAlchemy's
public ``event`` API and the two entry points ``make check``, ``make grade`` and
``nbgrader_config.py`` call (they import nbgrader only when called).

Nothing here changes what nbgrader computes or writes; it changes how long it takes.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path


def install() -> None:
    """Make nbgrader read its alembic revision in-process (idempotent;
    :mod:`course.grader.nbgrader_alembic_heads`)."""
    from course.grader.nbgrader_alembic_heads import install

    install()


def lighten(app) -> None:
    """Swap nbgrader's CheckCellMetadata for the course's in ``app.preprocessors``
    (:mod:`course.grader.nbgrader_schema_once`)."""
    from course.grader.nbgrader_schema_once import swap_in

    swap_in(app)


@contextlib.contextmanager
def throwaway_gradebook(folder: str | os.PathLike) -> Iterator[None]:
    """While the block runs, SQLite connections to databases under ``folder`` keep their
    rollback journal in memory and do not wait for the disk (module docstring)."""
    from sqlalchemy import event
    from sqlalchemy.engine import Engine

    inside = str(Path(folder).resolve()) + os.sep

    def on_connect(connection, _record) -> None:
        if not isinstance(connection, sqlite3.Connection):
            return
        files = [row[2] for row in connection.execute("PRAGMA database_list") if row[1] == "main"]
        if files and files[0] and os.path.realpath(files[0]).startswith(inside):
            connection.execute("PRAGMA journal_mode=MEMORY")
            connection.execute("PRAGMA synchronous=OFF")

    event.listen(Engine, "connect", on_connect)
    try:
        yield
    finally:
        event.remove(Engine, "connect", on_connect)
