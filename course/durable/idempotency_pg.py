"""The idempotency store on PostgreSQL (psycopg 3), for guards shared by many machines.

:class:`PostgresStore` keeps the promises of
:class:`~course.durable.idempotency.IdempotencyStore` (it passes the same conformance
suite as the memory and SQLite stores):

- :meth:`~PostgresStore.record_intent` is one atomic statement,
  ``INSERT ... ON CONFLICT DO NOTHING RETURNING``: of any number of processes
  racing for the same record exactly one gets the row back; the others get
  :class:`~course.durable.idempotency.RecordExists` with the winner's record. It
  returns only after the commit, so the intent is durable before the effect.
- :meth:`~PostgresStore.record_result` turns ``in_flight`` into ``done`` in one
  conditional ``UPDATE`` whose condition includes the fencing token when one is
  given; a record that is missing or already done is refused with
  :class:`~course.durable.idempotency.StepSettledElsewhere`, a stale token with
  :class:`~course.durable.idempotency.Superseded`.
- :meth:`~PostgresStore.take_over` raises the token under a row lock
  (``SELECT ... FOR UPDATE``), so two reconcilers cannot both take a step.
- A row that cannot be read back (unknown status, unreadable result) raises
  :class:`~course.durable.idempotency.CorruptRecord` naming the record.

Connections are opened lazily, one per process and thread, so a store created
in a notebook or a test can be handed to ``fork()``-ed crash workers: a child
never touches (or closes) the connection of its parent.
"""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg import sql
from psycopg.rows import dict_row

from course.durable.idempotency import (
    IdempotencyStore,
    RecordExists,
    StepRecord,
    _check_settle,
    _encode_args,
    _encode_result,
    _next_fence,
    _row_to_record,
)
from course.storage.connections import PerThreadConnections

_SCHEMA = """
CREATE TABLE IF NOT EXISTS {table} (
    record_id TEXT PRIMARY KEY, idem_key TEXT NOT NULL, args_hash TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('in_flight', 'done')), result TEXT,
    args TEXT, fence BIGINT NOT NULL DEFAULT 1)
"""
_UPGRADE = """
ALTER TABLE {table} ADD COLUMN IF NOT EXISTS args TEXT,
    ADD COLUMN IF NOT EXISTS fence BIGINT NOT NULL DEFAULT 1
"""


class PgConnections:
    """One autocommit psycopg connection per (process, thread), opened on first use."""

    def __init__(self, conninfo: str) -> None:
        self.conninfo = conninfo
        self._per_thread = PerThreadConnections(
            lambda: psycopg.connect(conninfo, autocommit=True, row_factory=dict_row),
            is_usable=lambda conn: not conn.closed)

    @property
    def conn(self) -> psycopg.Connection:
        return self._per_thread.get()

    def close(self) -> None:
        self._per_thread.close()


def qualified(schema: str | None, table: str) -> sql.Identifier:
    return sql.Identifier(table) if schema is None else sql.Identifier(schema, table)


class PostgresStore(IdempotencyStore):
    """Guard records in a PostgreSQL table, ``step_records`` (in ``schema`` if given)."""

    def __init__(self, conninfo: str, *, schema: str | None = None) -> None:
        self.conninfo = conninfo
        self.schema = schema  # None: the connection's search_path decides (usually public)
        self._pg = PgConnections(conninfo)
        self._table = qualified(schema, "step_records")
        with self._pg.conn.transaction():
            if schema is not None:
                self._pg.conn.execute(
                    sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(schema)))
            self._pg.conn.execute(sql.SQL(_SCHEMA).format(table=self._table))
            try:  # a table made before fencing lacks two columns; ALTER only then (it locks)
                with self._pg.conn.transaction():
                    self._pg.conn.execute(
                        self._sql("SELECT args, fence FROM {table} LIMIT 0"))
            except psycopg.errors.UndefinedColumn:
                self._pg.conn.execute(sql.SQL(_UPGRADE).format(table=self._table))

    def _sql(self, text: str) -> sql.Composed:
        return sql.SQL(text).format(table=self._table)

    def get(self, record_id: str) -> StepRecord | None:
        row = self._pg.conn.execute(
            self._sql("SELECT * FROM {table} WHERE record_id = %s"), (record_id,)).fetchone()
        return None if row is None else _row_to_record(row)

    def record_intent(self, record_id: str, idem_key: str, args_hash: str, *,
                      args: dict[str, Any] | None = None, fence: int = 1) -> StepRecord:
        conn = self._pg.conn
        encoded_args = _encode_args(args)
        while True:
            inserted = conn.execute(self._sql(
                "INSERT INTO {table} (record_id, idem_key, args_hash, status, args, fence) "
                "VALUES (%s, %s, %s, 'in_flight', %s, %s) ON CONFLICT (record_id) DO NOTHING "
                "RETURNING *"), (record_id, idem_key, args_hash, encoded_args, fence)).fetchone()
            if inserted is not None:
                return _row_to_record(inserted)
            existing = self.get(record_id)
            if existing is not None:
                raise RecordExists(existing)
            # The row we collided with was cleared in between: try again.

    def _locked(self, conn: psycopg.Connection, record_id: str) -> StepRecord | None:
        row = conn.execute(self._sql("SELECT * FROM {table} WHERE record_id = %s FOR UPDATE"),
                           (record_id,)).fetchone()
        return None if row is None else _row_to_record(row)

    def take_over(self, record_id: str, fence: int | None = None) -> StepRecord | None:
        conn = self._pg.conn
        with conn.transaction():
            record = self._locked(conn, record_id)
            if record is None or record.status != "in_flight":
                return record
            row = conn.execute(self._sql(
                "UPDATE {table} SET fence = %s WHERE record_id = %s RETURNING *"),
                (_next_fence(record, fence), record_id)).fetchone()
        return _row_to_record(row)

    def record_result(self, record_id: str, result: Any, *,
                      fence: int | None = None) -> StepRecord:
        encoded = _encode_result(result)
        conn = self._pg.conn
        with conn.transaction():  # the token check and the write under one row lock
            _check_settle(record_id, self._locked(conn, record_id), fence)
            row = conn.execute(self._sql(
                "UPDATE {table} SET status = 'done', result = %s WHERE record_id = %s "
                "RETURNING *"), (encoded, record_id)).fetchone()
        return _row_to_record(row)

    def clear(self, record_id: str, *, fence: int | None = None) -> None:
        conn = self._pg.conn
        with conn.transaction():
            record = self._locked(conn, record_id)
            if record is not None and record.status == "in_flight":
                _check_settle(record_id, record, fence)
                conn.execute(self._sql("DELETE FROM {table} WHERE record_id = %s"), (record_id,))

    def records(self) -> list[StepRecord]:
        rows = self._pg.conn.execute(
            self._sql('SELECT * FROM {table} ORDER BY record_id COLLATE "C"'))
        return [_row_to_record(r) for r in rows]

    def close(self) -> None:
        self._pg.close()
