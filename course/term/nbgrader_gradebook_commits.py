"""One transaction around nbgrader's Gradebook, whose methods commit as they go.

Works around: nbgrader's ``Gradebook`` has no transaction a caller can hold. Its
``add_submission``, ``update_or_create_student`` and the like end with
``self.db.commit()``, so a merge that calls several of them would leave a student
half-merged if the process were killed between two calls. :func:`one_transaction`
sets ``commit`` on nbgrader's session (``Gradebook.db``, a SQLAlchemy
``scoped_session``) to its ``flush``, an instance attribute, while the block runs:
nbgrader's writes reach the database inside the open transaction, which is committed
once at the end or rolled back. The instance attribute is removed again afterwards, so
the class's own ``scoped_session.commit`` is what later calls reach.

It relies on: ``Gradebook.db`` being the ``scoped_session`` nbgrader commits through
(``self.db.commit()``, never ``session.begin()`` blocks or a second session), and
``commit``/``flush`` taking no argument that nbgrader passes.

Written against: nbgrader 0.9.6, SQLAlchemy 2.1.9 (constraints.txt).
Upstream: no upstream issue; the hook is private (assigning ``commit`` on nbgrader's
session). The merge it serves is what jupyter/nbgrader#1424 ("Merging gradebooks") asks
for: https://github.com/jupyter/nbgrader/issues/1424
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator


@contextlib.contextmanager
def one_transaction(gb) -> Iterator[None]:
    """Everything ``gb`` (an nbgrader ``Gradebook``) does inside is committed once at the
    end, or rolled back."""
    session = gb.db
    session.commit = session.flush  # nbgrader's methods commit as they go
    try:
        yield
    except BaseException:
        del session.commit
        session.rollback()
        raise
    del session.commit
    session.commit()
