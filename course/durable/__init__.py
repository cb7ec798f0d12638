"""Durability machinery: idempotency records, the guard, leases, the recovery policy.

May import: :mod:`course.base`, :mod:`course.storage`. It is generic: nothing here
knows CloudWave, its billing simulator or its graph, which is why the world
(one floor up) can keep the guard's record table next to the bank and the mail
vendor.

- :mod:`course.durable.idempotency`: the :class:`IdempotencyStore` interface
  and its memory and SQLite backends; :mod:`course.durable.idempotency_pg` the
  Postgres backend (needs the ``postgres`` extra; imported on first use).
- :mod:`course.durable.guard`: :func:`guarded` (intent before the effect, result
  after), :func:`reconcile`, :class:`NeedsReconcile`, the key helpers.
- :mod:`course.durable.lease`: thread leases, so one resumer works a thread.
- :mod:`course.durable.recovery`: :class:`Recovery` (resume / branch / abandon),
  :func:`select_recovery`, checkpoint diagnosis.
"""

from typing import Any

from course.durable.guard import (
    GuardArgsMismatch,
    NeedsReconcile,
    args_hash,
    guarded,
    idem_key,
    readable_key,
    reconcile,
    record_id,
)
from course.durable.idempotency import (
    CorruptRecord,
    IdempotencyStore,
    MemoryStore,
    RecordExists,
    SQLiteStore,
    StepRecord,
    StepSettledElsewhere,
    Superseded,
)
from course.durable.lease import (
    InProgressElsewhere,
    Lease,
    LeaseLost,
    LeaseStore,
    SQLiteLeases,
)
from course.durable.recovery import Recovery, select_recovery

__all__ = ["CorruptRecord", "GuardArgsMismatch", "IdempotencyStore", "InProgressElsewhere",
           "Lease", "LeaseLost", "LeaseStore", "MemoryStore", "NeedsReconcile", "PostgresStore",
           "RecordExists", "Recovery", "SQLiteLeases", "SQLiteStore", "StepRecord",
           "StepSettledElsewhere", "Superseded", "args_hash",
           "guarded", "idem_key", "readable_key", "reconcile", "record_id", "select_recovery"]


def __getattr__(name: str) -> Any:
    if name == "PostgresStore":  # psycopg is an optional extra: import it only when asked
        from course.durable.idempotency_pg import PostgresStore
        return PostgresStore
    raise AttributeError(f"module 'course.durable' has no attribute {name!r}")
