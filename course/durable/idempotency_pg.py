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
  conditional ``UPDATE``; a record that is missing or already done is refused.
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
    _encode_result,
    _row_to_record,
)
from course.storage.connections import PerThreadConnections

_SCHEMA = """
CREATE TABLE IF NOT EXISTS {table} (
    record_id TEXT PRIMARY KEY, idem_key TEXT NOT NULL, args_hash TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('in_flight', 'done')), result TEXT)
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

    def _sql(self, text: str) -> sql.Composed:
        return sql.SQL(text).format(table=self._table)

    def get(self, record_id: str) -> StepRecord | None:
        row = self._pg.conn.execute(
            self._sql("SELECT * FROM {table} WHERE record_id = %s"), (record_id,)).fetchone()
        return None if row is None else _row_to_record(row)

    def record_intent(self, record_id: str, idem_key: str, args_hash: str) -> StepRecord:
        conn = self._pg.conn
        while True:
            inserted = conn.execute(self._sql(
                "INSERT INTO {table} (record_id, idem_key, args_hash, status) "
                "VALUES (%s, %s, %s, 'in_flight') ON CONFLICT (record_id) DO NOTHING "
                "RETURNING record_id"), (record_id, idem_key, args_hash)).fetchone()
            if inserted is not None:
                return StepRecord(record_id, idem_key, args_hash, "in_flight")
            existing = self.get(record_id)
            if existing is not None:
                raise RecordExists(existing)
            # The row we collided with was cleared in between: try again.

    def record_result(self, record_id: str, result: Any) -> StepRecord:
        encoded = _encode_result(result)
        row = self._pg.conn.execute(self._sql(
            "UPDATE {table} SET status = 'done', result = %s "
            "WHERE record_id = %s AND status = 'in_flight' RETURNING *"),
            (encoded, record_id)).fetchone()
        if row is None:
            raise ValueError(f"no in-flight record {record_id!r} to complete")
        return _row_to_record(row)

    def clear(self, record_id: str) -> None:
        self._pg.conn.execute(
            self._sql("DELETE FROM {table} WHERE record_id = %s AND status = 'in_flight'"),
            (record_id,))

    def records(self) -> list[StepRecord]:
        rows = self._pg.conn.execute(
            self._sql('SELECT * FROM {table} ORDER BY record_id COLLATE "C"'))
        return [_row_to_record(r) for r in rows]

    def close(self) -> None:
        self._pg.close()
