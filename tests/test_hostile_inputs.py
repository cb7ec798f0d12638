"""Hostile and broken inputs: each gets a clear error, and nothing is charged or lost.

Every test starts from a world that already holds one legitimate, guarded
charge (Ada's invoice inv_9), makes the bad call, and checks two things: the
message a person reads, and that the ledger (charges, refunds, provider keys,
mail) is exactly what it was.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import sqlite3

import pytest

from course.base import shown_path
from course.cloudwave.graph import build_graph
from course.cloudwave.nodes import KEYED_NODES, charge_keyed
from course.crash import CrashHarness
from course.durable.guard import GuardArgsMismatch, guarded, idem_key, reconcile
from course.durable.idempotency import CorruptRecord
from course.durable.recovery import Recovery, decide
from course.world import World
from course.world.billing import IdempotencyKeyMismatch, InvalidRequest
from course.world.catalogue import MAX_CENTS

ADA = {"customer_id": "cus_ada", "invoice_id": "inv_9", "cents": 2900, "currency": "usd"}


def charger(world, calls: list | None = None):
    def charge(idem_key, **kwargs):
        if calls is not None:
            calls.append(idem_key)
        return world.billing.charge(**kwargs, idempotency_key=idem_key)
    return charge


def ledger(world) -> dict:
    return {"charges": world.billing.charges(), "refunds": world.billing.refunds(),
            "keys": world.billing.keys(), "mail": world.mail.sent()}


@pytest.fixture
def charged(world):
    """A world with one good charge for inv_9 made through the guard (session t0)."""
    guarded("t0", "charge", charger(world), ADA, store=world.records)
    assert len(world.billing.charges()) == 1
    return world


# ------------------------------------------------------------ reused keys
def test_a_provider_key_reused_with_other_parameters_charges_nothing(charged):
    before = ledger(charged)
    key = before["charges"][0]["idempotency_key"]
    with pytest.raises(IdempotencyKeyMismatch,
                       match=r"was first used with other parameters.*nothing was charged"):
        charged.billing.charge(**{**ADA, "cents": 100}, idempotency_key=key)
    assert ledger(charged) == before


def test_the_guard_refuses_the_same_step_with_other_arguments(charged):
    before = ledger(charged)
    calls: list = []
    with pytest.raises(GuardArgsMismatch, match="first run with other arguments"):
        guarded("t0", "charge", charger(charged, calls), {**ADA, "cents": 100},
                store=charged.records)
    assert calls == []
    assert ledger(charged) == before


# ------------------------------------------------------------ bad amounts
@pytest.mark.parametrize(("cents", "message"), [
    (29.0, "whole number of cents"),
    ("2900", "whole number of cents"),
    (None, "whole number of cents"),
    (True, "whole number of cents"),
    (float("nan"), "whole number of cents"),
    (0, "must be positive"),
    (-2900, "must be positive"),
    (MAX_CENTS + 1, "over the limit"),
    (10**30, "over the limit"),
])
def test_bad_amounts_through_the_guard_charge_nothing(charged, cents, message):
    before = ledger(charged)
    with pytest.raises(InvalidRequest, match=message):
        guarded("t1", "charge", charger(charged), {**ADA, "cents": cents},
                store=charged.records)
    assert ledger(charged) == before
    # A refusal says the effect did not land, so the guard leaves no intent behind:
    # a retry gets the same clear refusal, not a reconciliation.
    assert charged.records.get("t1:charge") is None
    with pytest.raises(InvalidRequest, match=message):
        guarded("t1", "charge", charger(charged), {**ADA, "cents": cents},
                store=charged.records)
    assert charged.records.get("t1:charge") is None
    assert ledger(charged) == before


# ---------------------------------------------------- unknown invoice or customer
@pytest.mark.parametrize(("change", "message"), [
    ({"invoice_id": "inv_404"}, "unknown invoice 'inv_404'"),
    ({"customer_id": "cus_nobody"}, "unknown customer 'cus_nobody'"),
    ({"customer_id": "cus_lin"}, "invoice inv_9 does not belong to customer cus_lin"),
])
def test_unknown_invoices_and_customers_charge_nothing(charged, change, message):
    before = ledger(charged)
    with pytest.raises(InvalidRequest, match=message):
        guarded("t2", "charge", charger(charged), {**ADA, **change}, store=charged.records)
    assert ledger(charged) == before


def test_a_conversation_about_an_unknown_invoice_stops_before_any_money_moves():
    harness = CrashHarness("keyed", message="Hi, it's Ada (ada@example.com): pay inv_404 please")
    result = harness.run()
    assert result.status == "error"
    assert "no such invoice: 'inv_404'" in result.attempts[-1].detail
    world = World(result.run_dir)
    try:
        assert ledger(world) == {"charges": [], "refunds": [], "keys": [], "mail": []}
    finally:
        world.close()


# ------------------------------------------------------------ oversized keys
def test_a_10000_character_provider_key_is_refused(charged):
    before = ledger(charged)
    with pytest.raises(InvalidRequest, match="10000 characters long; the limit is 255"):
        charged.billing.charge(**ADA, idempotency_key="k" * 10_000)
    assert ledger(charged) == before


def test_a_10000_character_email_id_is_refused(charged):
    before = ledger(charged)
    with pytest.raises(InvalidRequest, match="email_id must be a string of 1 to 255 characters"):
        charged.mail.send(to="ada@example.com", template="payment_receipt", subject="Paid",
                          body="We charged inv_9.", email_id="e" * 10_000)
    assert ledger(charged) == before


@pytest.mark.parametrize(("payload", "message"), [
    ('{"invoice_id": "inv_9"}', "got str '{\"invoice_id\": \"inv_9\"}'; if it is JSON text"),
    ({"at": object()}, "must be JSON-serialisable"),
])
def test_a_webhook_payload_that_is_not_a_json_object_is_refused_and_delivers_nothing(
        world, payload, message):
    with pytest.raises(InvalidRequest, match=re.escape(message)):
        world.webhook.post("invoice.paid", payload, idempotency_key="m1")
    assert world.webhook.deliveries() == []
    world.webhook.post("invoice.paid", {"invoice_id": "inv_9"})
    assert world.ledger().count("webhooks", "inv_9") == 1


def test_the_guard_hashes_a_huge_session_id_into_a_short_key(charged):
    session = "s" * 10_000
    guarded(session, "charge", charger(charged), {**ADA, "invoice_id": "inv_10", "cents": 4900},
            store=charged.records)
    keys = [c["idempotency_key"] for c in charged.billing.charges()]
    assert len(keys) == 2 and keys[1] == idem_key(session, "charge",
                                                  {**ADA, "invoice_id": "inv_10", "cents": 4900})
    assert len(keys[1]) == 32


# ------------------------------------------------------ corrupted stored state
@pytest.mark.parametrize(("column", "value", "message"), [
    ("result", "{not json", "says 'done' but its stored result is unreadable"),
    ("idem_key", "", "is corrupt"),
])
def test_a_corrupted_guard_record_is_surfaced_and_fires_nothing(charged, column, value, message):
    before = ledger(charged)
    conn = sqlite3.connect(charged.records.path)
    conn.execute(f"UPDATE step_records SET {column} = ? WHERE record_id = 't0:charge'", (value,))
    conn.commit()
    conn.close()
    calls: list = []
    with pytest.raises(CorruptRecord, match=f"'t0:charge'.*{message}"):
        guarded("t0", "charge", charger(charged, calls), ADA, store=charged.records)
    with pytest.raises(CorruptRecord, match="t0:charge"):
        reconcile("t0", "charge", store=charged.records, lookup=charged.find_listed)
    assert calls == []
    assert ledger(charged) == before
    recovery, reason = decide(CorruptRecord(f"record 't0:charge' {message}"))
    assert recovery is Recovery.ABANDON and "corrupt" in reason


def test_a_truncated_checkpoint_database_is_abandoned_and_loses_nothing(tmp_path):
    harness = CrashHarness("keyed", root=tmp_path / "runs")
    result = harness.run("charge", "after_effect")
    assert result.killed_at == ("charge", "after_effect")
    world = World(result.run_dir)
    before = ledger(world)
    assert len(before["charges"]) == 1 and len(before["mail"]) == 1
    db = result.run_dir / "checkpoints.db"
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # the killed workers left data in the WAL
    conn.close()
    with db.open("r+b") as file:
        file.truncate(db.stat().st_size // 2 + 123)
    damaged = db.read_bytes()
    recovery, reason = decide(None, checkpoints=db, thread_id=result.thread_id)
    assert recovery is Recovery.ABANDON
    assert reason.startswith(f"abandon: checkpoint database {shown_path(db)} is truncated")
    assert db.read_bytes() == damaged  # diagnosing wrote nothing
    assert ledger(world) == before
    world.close()


# ------------------------------------------------------------ the 24 h clock
def test_after_24_hours_the_provider_alone_would_charge_again(charged):
    key = charged.billing.charges()[0]["idempotency_key"]
    charged.billing.advance_clock(hours=25)
    assert charged.billing.find_by_key(key) is None  # pruned: the provider forgot it
    again = charged.billing.charge(**ADA, idempotency_key=key)
    assert again["replayed"] is False
    assert len(charged.billing.charges()) == 2  # what the guard is there to prevent


def test_after_24_hours_the_guard_still_remembers_and_charges_nothing(charged):
    before = ledger(charged)
    key = before["charges"][0]["idempotency_key"]
    charged.billing.advance_clock(hours=25)
    assert charged.billing.find_by_key(key) is None
    calls: list = []
    result = guarded("t0", "charge", charger(charged, calls), ADA, store=charged.records)
    assert calls == []
    assert result["id"] == before["charges"][0]["id"]
    assert charged.billing.charges() == before["charges"]


def killed_after_charging_then_resumed_a_day_later(world, checkpointer):
    """Keyed graph; the first worker is SIGKILLed right after the charge landed, and the
    worker that resumes first moves the provider's clock 25 hours on."""
    marker = world.directory / "killed-once"

    def charge(state, world):
        if marker.exists():
            world.billing.advance_clock(hours=25)
            return charge_keyed(state, world)
        charge_keyed(state, world)
        marker.touch()
        os.kill(os.getpid(), signal.SIGKILL)

    return build_graph({**KEYED_NODES, "charge": charge}, world=world, checkpointer=checkpointer)


def test_a_run_resumed_after_the_key_expired_is_not_charged_again(tmp_path):
    harness = CrashHarness(killed_after_charging_then_resumed_a_day_later, root=tmp_path)
    result = harness.run()
    assert [a.outcome for a in result.attempts] == ["killed", "completed"]
    assert (result.charges, result.emails) == (1, 1)
    world = World(result.run_dir)
    try:
        key = world.billing.charges()[0]["idempotency_key"]
        assert world.billing.find_by_key(key) is None  # the provider had forgotten the key
        assert world.records.get(f"{result.thread_id}:charge").status == "done"
    finally:
        world.close()
    shutil.rmtree(result.run_dir)
