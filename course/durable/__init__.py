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
- :mod:`course.durable.actions`: carry a recovery out: :func:`resume`,
  :func:`branch`, :func:`abandon` (settle in-flight steps first).
- :mod:`course.durable.savers`: checkpointers (SQLite, safe across ``fork``; Postgres)
  that tell the crash points when a write record or a checkpoint is stored.
- :mod:`course.durable.replay`: :class:`ReplayRecord` per step (model name and
  version, transcript hash, tool inputs and outputs), :class:`ReplayLog`,
  :func:`model_changed_at`, :func:`replay_tools`.
"""

from typing import Any

from course.durable.actions import (
    Abandoned,
    abandon,
    branch,
    checkpoint_before,
    history,
    in_flight,
    quarantine,
    resume,
    settle,
    thread_config,
)
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
from course.durable.recovery import (
    BudgetExhausted,
    Decision,
    Recovery,
    classify_error,
    decide,
    diagnose_checkpoints,
    select_recovery,
)
from course.durable.replay import (
    ModelChange,
    ReplayLog,
    ReplayRecord,
    model_changed_at,
    model_changes,
    model_metadata,
    replay_table,
    replay_tools,
    transcript_hash,
)

__all__ = [
    "Abandoned",
    "BudgetExhausted",
    "CorruptRecord",
    "Decision",
    "GuardArgsMismatch",
    "IdempotencyStore",
    "InProgressElsewhere",
    "Lease",
    "LeaseLost",
    "LeaseStore",
    "MemoryStore",
    "ModelChange",
    "NeedsReconcile",
    "PostgresStore",
    "RecordExists",
    "Recovery",
    "ReplayLog",
    "ReplayRecord",
    "SQLiteLeases",
    "SQLiteStore",
    "StepRecord",
    "StepSettledElsewhere",
    "Superseded",
    "abandon",
    "args_hash",
    "branch",
    "checkpoint_before",
    "classify_error",
    "decide",
    "diagnose_checkpoints",
    "guarded",
    "history",
    "idem_key",
    "in_flight",
    "model_changed_at",
    "model_changes",
    "model_metadata",
    "quarantine",
    "readable_key",
    "reconcile",
    "record_id",
    "replay_table",
    "replay_tools",
    "resume",
    "select_recovery",
    "settle",
    "thread_config",
    "transcript_hash",
]


def __getattr__(name: str) -> Any:
    if name == "PostgresStore":  # psycopg is an optional extra: import it only when asked
        from course.durable.idempotency_pg import PostgresStore
        return PostgresStore
    raise AttributeError(f"module 'course.durable' has no attribute {name!r}")
