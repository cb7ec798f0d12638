"""nbgrader's fixed costs that are overhead, not grading, cut without changing a result.

Measured on a 2-core machine while grading week 5 (``python -m bench --only grading``),
each of these cost more than a second per ``make check`` or per grading group, for
nothing a grade depends on:

- **The gradebook's alembic revision by subprocess.** A new gradebook asks
  ``nbgrader.api.get_alembic_version`` for the newest migration, which starts the
  ``alembic heads`` program (a fresh interpreter importing SQLAlchemy and alembic) to
  read nbgrader's own migration folder. :func:`install` answers the same question in
  this process, from the same folder (:func:`alembic_head`), once per process. The
  revision written into the gradebook is the same string (a test compares it with the
  program's answer).
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
  :class:`course.grader.metadata.CheckCellMetadata`: the same checks, the schema
  checked once per process (``nbgrader_config.py`` names it for autograde).

Nothing here changes what nbgrader computes or writes; it changes how long it takes.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path


@functools.cache
def alembic_head() -> str:
    """The newest revision of nbgrader's gradebook migrations (what ``alembic heads``
    prints first), read in this process.

    nbgrader's history is one straight line of migration scripts, each saying its
    ``revision`` and the ``down_revision`` it follows: the head is the one no script
    follows. The scripts are read as text (``ast``; importing alembic to ask costs ten
    times more); anything else (branches, merges, dependencies, a script that does not
    say) is left to alembic's own ``ScriptDirectory``."""
    from nbgrader.dbutil import ALEMBIC_DIR

    links = [_revision_of(path) for path in sorted(Path(ALEMBIC_DIR, "versions").glob("*.py"))]
    if links and all(link is not None for link in links):
        followed = {down for _, down in links}
        heads = [revision for revision, _ in links if revision not in followed]
        if len(heads) == 1 and len(followed) == len(links):
            return heads[0]
    from alembic.script import ScriptDirectory

    return ScriptDirectory(ALEMBIC_DIR).get_current_head()


def _revision_of(path: Path) -> tuple[str, str | None] | None:
    """(revision, down_revision) of a plain migration script; None for anything else."""
    values = {}
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 \
                and isinstance(node.targets[0], ast.Name):
            try:
                values[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                continue
    revision, down = values.get("revision"), values.get("down_revision", ...)
    plain = (values.get("branch_labels") is None and values.get("depends_on") is None
             and isinstance(revision, str) and (down is None or isinstance(down, str)))
    return (revision, down) if plain else None


def install() -> None:
    """Make nbgrader read its alembic revision in-process (idempotent)."""
    import nbgrader.api

    if nbgrader.api.get_alembic_version is not alembic_head:
        nbgrader.api.get_alembic_version = alembic_head


def lighten(app) -> None:
    """Swap nbgrader's CheckCellMetadata for the course's in ``app.preprocessors``."""
    from nbgrader.preprocessors import CheckCellMetadata as Theirs

    from course.grader.metadata import CheckCellMetadata as Ours

    if Theirs in app.preprocessors:
        app.preprocessors = [Ours if p is Theirs else p for p in app.preprocessors]


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
