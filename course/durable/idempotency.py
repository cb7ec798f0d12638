"""The idempotency store: where the guard writes intent before a side effect and
the result after it.

One interface, :class:`IdempotencyStore`, several backends (memory, SQLite and,
with the ``postgres`` extra, Postgres). Every backend passes the same
conformance suite (``tests/test_idempotency_conformance.py``). What each
method promises:

- :meth:`~IdempotencyStore.record_intent` atomically creates an ``in_flight``
  record. If a record already exists it raises :class:`RecordExists` carrying
  the existing record, so two callers can never both believe they own a step.
  When it returns, the intent is durable (committed).
- :meth:`~IdempotencyStore.record_result` turns an ``in_flight`` record into
  ``done`` with a JSON-serialisable result, durably.
- :meth:`~IdempotencyStore.get` returns the record or ``None``. A record that
  cannot be read back raises :class:`CorruptRecord` naming the record.
- :meth:`~IdempotencyStore.clear` removes an ``in_flight`` record; used by
  reconciliation when the provider shows the effect never landed.
"""

from __future__ import annotations

import json
import threading
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Literal

from course.storage.sqlite import SqliteBacked, transaction

Status = Literal["in_flight", "done"]


@dataclass(frozen=True)
class StepRecord:
    record_id: str
    idem_key: str
    args_hash: str
    status: Status
    result: Any = None


class RecordExists(Exception):
    """:meth:`IdempotencyStore.record_intent` found a record already there."""

    def __init__(self, existing: StepRecord) -> None:
        super().__init__(f"a record for {existing.record_id!r} already exists "
                         f"(status {existing.status})")
        self.existing = existing


class CorruptRecord(Exception):
    """A stored record cannot be read back. Nothing is re-fired on its account."""


class IdempotencyStore(ABC):
    """Durable records of side-effecting steps, keyed by ``record_id``."""

    @abstractmethod
    def get(self, record_id: str) -> StepRecord | None: ...

    @abstractmethod
    def record_intent(self, record_id: str, idem_key: str, args_hash: str) -> StepRecord: ...

    @abstractmethod
    def record_result(self, record_id: str, result: Any) -> StepRecord: ...

    @abstractmethod
    def clear(self, record_id: str) -> None: ...

    @abstractmethod
    def records(self) -> list[StepRecord]: ...

    def close(self) -> None:  # noqa: B027 - a backend that holds nothing need not override
        """Release connections."""


def _encode_result(result: Any) -> str:
    try:
        return json.dumps(result, sort_keys=True)
    except TypeError as error:
        raise TypeError(
            f"a guarded step must return JSON-serialisable data so it can be recorded: {error}"
        ) from None


class MemoryStore(IdempotencyStore):
    """In-process records. Fine for tests; lost with the process, so no crash survives it."""

    def __init__(self) -> None:
        self._records: dict[str, StepRecord] = {}
        self._lock = threading.Lock()

    def get(self, record_id: str) -> StepRecord | None:
        return self._records.get(record_id)

    def record_intent(self, record_id: str, idem_key: str, args_hash: str) -> StepRecord:
        with self._lock:
            if record_id in self._records:
                raise RecordExists(self._records[record_id])
            record = StepRecord(record_id, idem_key, args_hash, "in_flight")
            self._records[record_id] = record
            return record

    def record_result(self, record_id: str, result: Any) -> StepRecord:
        encoded = _encode_result(result)
        with self._lock:
            record = self._records.get(record_id)
            if record is None or record.status != "in_flight":
                raise ValueError(f"no in-flight record {record_id!r} to complete")
            done = StepRecord(record_id, record.idem_key, record.args_hash, "done",
                              json.loads(encoded))
            self._records[record_id] = done
            return done

    def clear(self, record_id: str) -> None:
        with self._lock:
            record = self._records.get(record_id)
            if record is not None and record.status == "in_flight":
                del self._records[record_id]

    def records(self) -> list[StepRecord]:
        return sorted(self._records.values(), key=lambda r: r.record_id)


_SQLITE_SCHEMA = """
CREATE TABLE IF NOT EXISTS step_records (
    record_id TEXT PRIMARY KEY, idem_key TEXT NOT NULL, args_hash TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('in_flight', 'done')), result TEXT);
"""


class SQLiteStore(SqliteBacked, IdempotencyStore):
    """Records in a SQLite file: survives SIGKILL; shared by every process given the path."""

    schema = _SQLITE_SCHEMA

    def get(self, record_id: str) -> StepRecord | None:
        row = self._conn.execute(
            "SELECT * FROM step_records WHERE record_id = ?", (record_id,)).fetchone()
        return None if row is None else _row_to_record(dict(row))

    def record_intent(self, record_id: str, idem_key: str, args_hash: str) -> StepRecord:
        with transaction(self._conn):
            row = self._conn.execute(
                "SELECT * FROM step_records WHERE record_id = ?", (record_id,)).fetchone()
            if row is not None:
                raise RecordExists(_row_to_record(dict(row)))
            self._conn.execute(
                "INSERT INTO step_records VALUES (?, ?, ?, 'in_flight', NULL)",
                (record_id, idem_key, args_hash))
        return StepRecord(record_id, idem_key, args_hash, "in_flight")

    def record_result(self, record_id: str, result: Any) -> StepRecord:
        encoded = _encode_result(result)
        with transaction(self._conn):
            cur = self._conn.execute(
                "UPDATE step_records SET status = 'done', result = ? "
                "WHERE record_id = ? AND status = 'in_flight'", (encoded, record_id))
            if cur.rowcount != 1:
                raise ValueError(f"no in-flight record {record_id!r} to complete")
        record = self.get(record_id)
        assert record is not None
        return record

    def clear(self, record_id: str) -> None:
        with transaction(self._conn):
            self._conn.execute(
                "DELETE FROM step_records WHERE record_id = ? AND status = 'in_flight'",
                (record_id,))

    def records(self) -> list[StepRecord]:
        return [_row_to_record(dict(r)) for r in self._conn.execute(
            "SELECT * FROM step_records ORDER BY record_id")]


def _row_to_record(row: dict[str, Any]) -> StepRecord:
    record_id = row.get("record_id", "?")
    status = row.get("status")
    if status not in ("in_flight", "done") or not row.get("idem_key"):
        raise CorruptRecord(
            f"idempotency record {record_id!r} is corrupt (status={status!r}); "
            "reconcile it by hand against the provider before resuming"
        )
    result = None
    if status == "done":
        try:
            result = json.loads(row["result"])
        except (TypeError, ValueError):
            raise CorruptRecord(
                f"idempotency record {record_id!r} says 'done' but its stored result is "
                f"unreadable ({str(row['result'])[:40]!r}); reconcile it against the provider"
            ) from None
    return StepRecord(record_id, row["idem_key"], row["args_hash"], status, result)
