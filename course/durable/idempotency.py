"""The idempotency store: where the guard writes intent before a side effect and
the result after it.

One interface, :class:`IdempotencyStore`, several backends (memory, SQLite and,
with the ``postgres`` extra, Postgres). Every backend passes the same
conformance suite (``tests/test_idempotency_conformance.py``). What each
method promises:

- :meth:`~IdempotencyStore.record_intent` atomically creates an ``in_flight``
  record (with the step's arguments, so a reconciler can send the same request
  again, and a fencing token, 1 unless the caller brings one, for example its
  thread lease's). If a record already exists it raises :class:`RecordExists`
  carrying the existing record, so two callers can never both believe they own
  a step. When it returns, the intent is durable (committed).
- :meth:`~IdempotencyStore.take_over` hands an ``in_flight`` record to a new
  owner (a reconciler): its fencing token goes up (to the one given, which must
  be larger, or by one). From then on a write that carries an older token is
  refused.
- :meth:`~IdempotencyStore.record_result` turns an ``in_flight`` record into
  ``done`` with a JSON-serialisable result, durably. With ``fence=``, only if
  the record's token is still that one: a superseded owner (a worker that was
  frozen while a reconciler took its step over) gets :class:`Superseded`.
  A record that another process already finished or cleared gives
  :class:`StepSettledElsewhere`, a sentence that says so.
- :meth:`~IdempotencyStore.get` returns the record or ``None``. A record that
  cannot be read back raises :class:`CorruptRecord` naming the record.
- :meth:`~IdempotencyStore.clear` removes an ``in_flight`` record (fenced like
  ``record_result``); used when the effect certainly did not land.

Fencing token: a number handed out with every ownership of a step, larger for
each new owner; the store compares it with the record's in the same statement
as the write. A time limit alone cannot stop a paused owner that wakes up after
its time ran out; the token can, because the store refuses its stale number.
"""

from __future__ import annotations

import json
import threading
from abc import ABC, abstractmethod
from dataclasses import dataclass, replace
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
    args: dict[str, Any] | None = None  # the step's arguments: what a reconciler re-sends
    fence: int = 1  # the fencing token of the record's current owner


class RecordExists(Exception):
    """:meth:`IdempotencyStore.record_intent` found a record already there."""

    def __init__(self, existing: StepRecord) -> None:
        super().__init__(f"a record for {existing.record_id!r} already exists "
                         f"(status {existing.status})")
        self.existing = existing


class StepSettledElsewhere(ValueError):
    """A result or clear arrived for a record that is no longer in flight: another process
    finished the step (or cleared it) first. Nothing is written; nothing is done twice."""

    def __init__(self, record_id: str, existing: StepRecord | None) -> None:
        if existing is None:
            text = (f"another process settled step {record_id!r} first (its call was refused, "
                    "or reconciled as never landed), so there is no in-flight record to "
                    "complete; this process's result was not recorded")
        else:
            text = (f"another process finished step {record_id!r} first; this process's "
                    "result was not recorded over it")
        super().__init__(text)
        self.record_id = record_id
        self.existing = existing


class Superseded(Exception):
    """A write carried a fencing token older than the record's: its owner was replaced."""

    def __init__(self, record_id: str, stale: int, current: int) -> None:
        super().__init__(
            f"step {record_id!r} was taken over by another process (fencing token {current}) "
            f"while this one (token {stale}) was paused or slow; this process's write was "
            "refused. Leave the step to the new owner")
        self.record_id = record_id
        self.stale = stale
        self.current = current


class CorruptRecord(Exception):
    """A stored record cannot be read back. Nothing is re-fired on its account."""


class IdempotencyStore(ABC):
    """Durable records of side-effecting steps, keyed by ``record_id``."""

    @abstractmethod
    def get(self, record_id: str) -> StepRecord | None: ...

    @abstractmethod
    def record_intent(self, record_id: str, idem_key: str, args_hash: str, *,
                      args: dict[str, Any] | None = None, fence: int = 1) -> StepRecord: ...

    @abstractmethod
    def take_over(self, record_id: str, fence: int | None = None) -> StepRecord | None: ...

    @abstractmethod
    def record_result(self, record_id: str, result: Any, *,
                      fence: int | None = None) -> StepRecord: ...

    @abstractmethod
    def clear(self, record_id: str, *, fence: int | None = None) -> None: ...

    @abstractmethod
    def records(self) -> list[StepRecord]: ...

    def close(self) -> None:  # noqa: B027 - a backend that holds nothing need not override
        """Release connections."""


def _next_fence(record: StepRecord, fence: int | None) -> int:
    """The token a new owner gets: ``fence`` if it is larger than the record's, else refused."""
    if fence is None:
        return record.fence + 1
    if fence <= record.fence:
        raise Superseded(record.record_id, fence, record.fence)
    return fence


def _check_settle(record_id: str, record: StepRecord | None, fence: int | None) -> None:
    """Why a result or clear cannot be written to ``record`` (raises), or nothing."""
    if record is None or record.status != "in_flight":
        raise StepSettledElsewhere(record_id, record)
    if fence is not None and fence != record.fence:
        raise Superseded(record_id, fence, record.fence)


def _encode_args(args: dict[str, Any] | None) -> str | None:
    return None if args is None else json.dumps(args, sort_keys=True)


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

    def record_intent(self, record_id: str, idem_key: str, args_hash: str, *,
                      args: dict[str, Any] | None = None, fence: int = 1) -> StepRecord:
        with self._lock:
            if record_id in self._records:
                raise RecordExists(self._records[record_id])
            record = StepRecord(record_id, idem_key, args_hash, "in_flight", None,
                                json.loads(_encode_args(args) or "null"), fence)
            self._records[record_id] = record
            return record

    def take_over(self, record_id: str, fence: int | None = None) -> StepRecord | None:
        with self._lock:
            record = self._records.get(record_id)
            if record is None or record.status != "in_flight":
                return record
            taken = replace(record, fence=_next_fence(record, fence))
            self._records[record_id] = taken
            return taken

    def record_result(self, record_id: str, result: Any, *,
                      fence: int | None = None) -> StepRecord:
        encoded = _encode_result(result)
        with self._lock:
            record = self._records.get(record_id)
            _check_settle(record_id, record, fence)
            assert record is not None
            done = replace(record, status="done", result=json.loads(encoded))
            self._records[record_id] = done
            return done

    def clear(self, record_id: str, *, fence: int | None = None) -> None:
        with self._lock:
            record = self._records.get(record_id)
            if record is not None and record.status == "in_flight":
                _check_settle(record_id, record, fence)
                del self._records[record_id]

    def records(self) -> list[StepRecord]:
        return sorted(self._records.values(), key=lambda r: r.record_id)


_SQLITE_SCHEMA = """
CREATE TABLE IF NOT EXISTS step_records (
    record_id TEXT PRIMARY KEY, idem_key TEXT NOT NULL, args_hash TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('in_flight', 'done')), result TEXT,
    args TEXT, fence INTEGER NOT NULL DEFAULT 1);
"""


class SQLiteStore(SqliteBacked, IdempotencyStore):
    """Records in a SQLite file: survives SIGKILL; shared by every process given the path."""

    schema = _SQLITE_SCHEMA
    upgrades = (("step_records", "args", "TEXT"),
                ("step_records", "fence", "INTEGER NOT NULL DEFAULT 1"))

    def get(self, record_id: str) -> StepRecord | None:
        row = self._conn.execute(
            "SELECT * FROM step_records WHERE record_id = ?", (record_id,)).fetchone()
        return None if row is None else _row_to_record(dict(row))

    def record_intent(self, record_id: str, idem_key: str, args_hash: str, *,
                      args: dict[str, Any] | None = None, fence: int = 1) -> StepRecord:
        encoded_args = _encode_args(args)
        with transaction(self._conn):
            row = self._conn.execute(
                "SELECT * FROM step_records WHERE record_id = ?", (record_id,)).fetchone()
            if row is not None:
                raise RecordExists(_row_to_record(dict(row)))
            self._conn.execute(
                "INSERT INTO step_records VALUES (?, ?, ?, 'in_flight', NULL, ?, ?)",
                (record_id, idem_key, args_hash, encoded_args, fence))
        return StepRecord(record_id, idem_key, args_hash, "in_flight", None,
                          json.loads(encoded_args or "null"), fence)

    def take_over(self, record_id: str, fence: int | None = None) -> StepRecord | None:
        with transaction(self._conn):
            record = self.get(record_id)
            if record is None or record.status != "in_flight":
                return record
            new = _next_fence(record, fence)
            self._conn.execute("UPDATE step_records SET fence = ? WHERE record_id = ?",
                               (new, record_id))
        return replace(record, fence=new)

    def record_result(self, record_id: str, result: Any, *,
                      fence: int | None = None) -> StepRecord:
        encoded = _encode_result(result)
        with transaction(self._conn):  # the token check and the write: one statement
            cur = self._conn.execute(
                "UPDATE step_records SET status = 'done', result = ? WHERE record_id = ? "
                "AND status = 'in_flight' AND (? IS NULL OR fence = ?)",
                (encoded, record_id, fence, fence))
            if cur.rowcount != 1:  # say why: finished, cleared, or taken over
                _check_settle(record_id, self.get(record_id), fence)
            record = self.get(record_id)
        assert record is not None
        return record

    def clear(self, record_id: str, *, fence: int | None = None) -> None:
        with transaction(self._conn):
            record = self.get(record_id)
            if record is not None and record.status == "in_flight":
                _check_settle(record_id, record, fence)
                self._conn.execute("DELETE FROM step_records WHERE record_id = ?",
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
    try:
        args = json.loads(row["args"]) if row.get("args") else None
    except ValueError:
        raise CorruptRecord(
            f"idempotency record {record_id!r} has unreadable arguments "
            f"({str(row['args'])[:40]!r}); reconcile it against the provider") from None
    return StepRecord(record_id, row["idem_key"], row["args_hash"], status, result, args,
                      int(row.get("fence") or 1))
