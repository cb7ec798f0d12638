"""The durable idempotency stores (SQLite, Postgres) across real processes, and corrupt rows.

The conformance suite checks each promise in one process; here the stores are
shared by forked processes (as the crash workers share them) and their rows
are damaged behind their back.
"""

from __future__ import annotations

import contextlib
import os
import select
import sqlite3
import time

import pytest

from course.durable.guard import NeedsReconcile, guarded
from course.durable.idempotency import CorruptRecord, RecordExists, SQLiteStore


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def durable(request, tmp_path):
    """``(store, raw_sql)``: a store and a way to run raw SQL on its table behind its back."""
    if request.param == "sqlite":
        store = SQLiteStore(tmp_path / "records.db")

        def raw(statement: str) -> None:
            with sqlite3.connect(store.path) as conn:
                conn.execute(statement)
    else:
        import psycopg

        from course.durable.idempotency_pg import PostgresStore

        uri = request.getfixturevalue("postgres_uri")
        store = PostgresStore(uri)

        def raw(statement: str) -> None:
            with psycopg.connect(uri, autocommit=True) as conn:
                conn.execute(statement)
    yield store, raw
    store.close()


def test_eight_processes_racing_for_one_intent_exactly_one_records_it(durable):
    store, _ = durable
    store.get("warm")  # the parent's connection exists before the fork: children must not use it
    gun_r, gun_w = os.pipe()
    out_r, out_w = os.pipe()
    pids = []
    for index in range(8):
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                os.close(gun_w)
                os.read(gun_r, 1)
                try:
                    store.record_intent("t1:charge", f"key-{index}", "h")
                    os.write(out_w, b"W")
                except RecordExists as lost:
                    os.write(out_w, b"L" if lost.existing.status == "in_flight" else b"?")
                code = 0
            finally:
                os._exit(code)
        pids.append(pid)
    os.close(gun_w)
    os.close(out_w)
    answers = b""
    while len(answers) < 8:
        readable, _, _ = select.select([out_r], [], [], 30)
        assert readable, f"only {len(answers)} of 8 processes answered"
        chunk = os.read(out_r, 8)
        assert chunk, "a process died without answering"
        answers += chunk
    assert all(os.WEXITSTATUS(os.waitpid(pid, 0)[1]) == 0 for pid in pids)
    assert sorted(answers.decode()) == ["L"] * 7 + ["W"]
    winner = store.get("t1:charge")
    assert winner.status == "in_flight" and winner.idem_key.startswith("key-")
    assert store.get("warm") is None  # the parent's own connection still works after the fork


def test_the_guard_in_eight_processes_fires_the_effect_once(durable, tmp_path):
    """All eight wait on one starting gun, then call the guard at the same instant."""
    store, _ = durable
    store.get("warm")
    fired = tmp_path / "fired.log"
    ready_r, ready_w = os.pipe()
    gun_r, gun_w = os.pipe()
    pids = []
    for _ in range(8):
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                os.close(gun_w)

                def effect(idem_key: str, cents: int) -> dict:
                    with open(fired, "a") as log:
                        log.write(f"{idem_key}\n")
                    time.sleep(0.02)  # the provider takes a moment to answer
                    return {"cents": cents}

                os.write(ready_w, b"R")
                os.read(gun_r, 1)  # blocks until the parent fires the gun
                with contextlib.suppress(NeedsReconcile):  # another process is mid-effect
                    guarded("t1", "charge", effect, {"cents": 2900}, store=store)
                code = 0
            finally:
                os._exit(code)
        pids.append(pid)
    os.close(gun_r)
    ready = b""
    while len(ready) < 8:  # every process is waiting at the line
        readable, _, _ = select.select([ready_r], [], [], 30)
        assert readable, f"only {len(ready)} of 8 processes got ready"
        ready += os.read(ready_r, 8)
    os.close(gun_w)  # the gun: every blocked read returns at once
    assert all(os.WEXITSTATUS(os.waitpid(pid, 0)[1]) == 0 for pid in pids)
    assert len(fired.read_text().splitlines()) == 1
    assert store.get("t1:charge").status == "done"


@pytest.mark.parametrize(("statement", "says"), [
    ("UPDATE step_records SET result = 'not json{' WHERE record_id = 't1:charge'",
     "stored result is unreadable"),
    ("UPDATE step_records SET idem_key = '' WHERE record_id = 't1:charge'",
     "is corrupt (status='done')"),
])
def test_an_unreadable_record_raises_corrupt_record_naming_it(durable, statement, says):
    store, raw = durable
    store.record_intent("t1:charge", "key-1", "h")
    store.record_result("t1:charge", {"id": "ch_1"})
    raw(statement)
    with pytest.raises(CorruptRecord, match="t1:charge") as caught:
        store.get("t1:charge")
    assert says in str(caught.value)
    with pytest.raises(CorruptRecord):  # and the guard refuses to fire on its account
        guarded("t1", "charge", lambda idem_key: pytest.fail("fired"), {}, store=store)
