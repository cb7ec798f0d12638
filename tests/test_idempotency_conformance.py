"""One conformance suite for every idempotency store backend.

Each backend is a fixture param; the Postgres one joins when the ``postgres``
fixture can start a real server (see ``tests/fixtures_pg.py``).
"""

from __future__ import annotations

import pytest

from course.durable.idempotency import (
    MemoryStore,
    RecordExists,
    SQLiteStore,
    StepSettledElsewhere,
    Superseded,
)

BACKENDS = ["memory", "sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


@pytest.fixture(params=BACKENDS)
def store(request, tmp_path):
    if request.param == "memory":
        s = MemoryStore()
    elif request.param == "sqlite":
        s = SQLiteStore(tmp_path / "records.db")
    else:
        s = request.getfixturevalue("postgres_store")
    yield s
    s.close()


def test_an_unknown_record_is_none(store):
    assert store.get("t1:charge") is None


def test_intent_then_result(store):
    intent = store.record_intent("t1:charge", "key-1", "hash-1")
    assert (intent.status, intent.idem_key, intent.result) == ("in_flight", "key-1", None)
    assert store.get("t1:charge").status == "in_flight"
    done = store.record_result("t1:charge", {"id": "ch_1", "cents": 2900})
    assert done.status == "done"
    again = store.get("t1:charge")
    assert again.result == {"id": "ch_1", "cents": 2900}
    assert again.args_hash == "hash-1"


def test_a_second_intent_for_the_same_record_is_refused_with_the_existing_one(store):
    store.record_intent("t1:charge", "key-1", "hash-1")
    with pytest.raises(RecordExists) as caught:
        store.record_intent("t1:charge", "key-2", "hash-2")
    assert caught.value.existing.idem_key == "key-1"


def test_results_need_an_in_flight_record_and_say_who_settled_it(store):
    with pytest.raises(StepSettledElsewhere, match="another process settled step 't1:charge'"):
        store.record_result("t1:charge", {"id": "ch_1"})
    store.record_intent("t1:charge", "key-1", "hash-1")
    store.record_result("t1:charge", {"id": "ch_1"})
    with pytest.raises(StepSettledElsewhere, match="another process finished step 't1:charge'"):
        store.record_result("t1:charge", {"id": "ch_2"})
    assert store.get("t1:charge").result == {"id": "ch_1"}


def test_intent_keeps_the_arguments_and_the_owners_token(store):
    store.record_intent("t1:charge", "key-1", "hash-1", args={"cents": 2900}, fence=7)
    record = store.get("t1:charge")
    assert (record.args, record.fence) == ({"cents": 2900}, 7)
    store.record_intent("t2:charge", "key-2", "hash-2")
    assert (store.get("t2:charge").args, store.get("t2:charge").fence) == (None, 1)


def test_a_taken_over_record_refuses_the_superseded_owners_writes(store):
    mine = store.record_intent("t1:charge", "key-1", "hash-1")
    theirs = store.take_over("t1:charge")
    assert theirs.fence > mine.fence and store.get("t1:charge").fence == theirs.fence
    with pytest.raises(Superseded, match="taken over by another process"):
        store.record_result("t1:charge", {"id": "ch_late"}, fence=mine.fence)
    with pytest.raises(Superseded):
        store.clear("t1:charge", fence=mine.fence)
    assert store.get("t1:charge").status == "in_flight"  # the stale writes changed nothing
    store.record_result("t1:charge", {"id": "ch_1"}, fence=theirs.fence)
    assert store.get("t1:charge").result == {"id": "ch_1"}


def test_a_take_over_needs_a_larger_token_and_leaves_finished_records_alone(store):
    store.record_intent("t1:charge", "key-1", "hash-1", fence=5)
    with pytest.raises(Superseded):
        store.take_over("t1:charge", fence=5)
    assert store.take_over("t1:charge", fence=9).fence == 9
    store.record_result("t1:charge", {"id": "ch_1"}, fence=9)
    assert store.take_over("t1:charge").status == "done"
    assert store.get("t1:charge").fence == 9
    assert store.take_over("missing") is None


def test_a_finished_result_of_none_is_still_done(store):
    store.record_intent("t1:noop", "key-1", "hash-1")
    store.record_result("t1:noop", None)
    record = store.get("t1:noop")
    assert (record.status, record.result) == ("done", None)


def test_clear_removes_only_in_flight_records(store):
    store.record_intent("a", "key-a", "h")
    store.record_intent("b", "key-b", "h")
    store.record_result("b", {"ok": True})
    store.clear("a")
    store.clear("b")
    assert store.get("a") is None
    assert store.get("b").status == "done"


def test_results_must_be_json(store):
    store.record_intent("t1:charge", "key-1", "hash-1")
    with pytest.raises(TypeError, match="JSON-serialisable"):
        store.record_result("t1:charge", {"when": object()})
    assert store.get("t1:charge").status == "in_flight"


def test_records_lists_everything_in_order(store):
    for name in ("t2:email", "t1:charge"):
        store.record_intent(name, f"key-{name}", "h")
    assert [r.record_id for r in store.records()] == ["t1:charge", "t2:email"]


@pytest.mark.postgres
def test_a_postgres_table_from_before_fencing_gains_its_columns(postgres_uri):
    import psycopg

    from course.durable import PostgresStore

    with psycopg.connect(postgres_uri, autocommit=True) as conn:
        conn.execute("CREATE TABLE step_records (record_id TEXT PRIMARY KEY, "
                     "idem_key TEXT NOT NULL, args_hash TEXT NOT NULL, status TEXT NOT NULL, "
                     "result TEXT)")
        conn.execute("INSERT INTO step_records VALUES ('old:charge', 'k', 'h', 'done', '1')")
    store = PostgresStore(postgres_uri)
    try:
        assert store.get("old:charge").fence == 1 and store.get("old:charge").result == 1
        store.record_intent("t1:charge", "key-1", "hash-1", args={"cents": 1}, fence=3)
        assert store.get("t1:charge").args == {"cents": 1}
    finally:
        store.close()
