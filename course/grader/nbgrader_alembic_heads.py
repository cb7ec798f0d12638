"""nbgrader's gradebook revision read in this process, not by the ``alembic heads`` program.

What it works around: a new gradebook asks ``nbgrader.api.get_alembic_version`` for the
newest migration, which starts the ``alembic heads`` program (a fresh interpreter importing
SQLAlchemy and alembic, over a second per gradebook) to read nbgrader's own migration
folder, and fails outright when no ``alembic`` program is on PATH (an nbgrader app started
outside the virtualenv). :func:`install` assigns :func:`alembic_head` in its place: the same
question answered in this process, from the same folder, once per process; the revision
written into the gradebook is the same string (tests/test_grading_speedups.py compares it
with the program's answer).

The hook: ``nbgrader.api.get_alembic_version``, a module attribute that
``nbgrader.api.Gradebook.__init__`` looks up when it creates a gradebook. Assigning it is
the only way in (nbgrader has no setting for it). tests/test_upstream_grader.py fails if it
moves, takes arguments, or is no longer what ``Gradebook`` calls.

Written against: nbgrader 0.9.6, alembic 1.20.1.
Upstream: no upstream issue; the hook is private.
"""

from __future__ import annotations

import ast
import functools
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
