"""``guarded``: intent before, result after, never a blind re-fire; ``reconcile`` settles."""

from __future__ import annotations

import pytest

from course.durable.guard import (
    GuardArgsMismatch,
    NeedsReconcile,
    args_hash,
    guarded,
    idem_key,
    reconcile,
)
from course.durable.idempotency import SQLiteStore
from course.grading.checks import kill_self, run_forked
from course.world import World

ARGS = {"customer_id": "cus_ada", "invoice_id": "inv_9", "cents": 2900}


def charger(world, calls=None):
    def charge(idem_key, **kwargs):
        if calls is not None:
            calls.append(idem_key)
        return world.billing.charge(**kwargs, idempotency_key=idem_key)
    return charge


def test_intent_is_durable_before_the_effect_fires(world, tmp_path):
    seen = []

    def effect(idem_key, **kwargs):
        # A second, independent connection must already see the intent.
        other = SQLiteStore(world.records.path)
        seen.append(other.get("t1:charge"))
        other.close()
        return {"ok": True}

    guarded("t1", "charge", effect, ARGS, store=world.records)
    assert seen[0] is not None and seen[0].status == "in_flight"
    assert world.records.get("t1:charge").status == "done"


def test_the_key_is_passed_downstream_and_is_stable(world):
    calls = []
    guarded("t1", "charge", charger(world, calls), ARGS, store=world.records)
    assert calls == [idem_key("t1", "charge", ARGS)]
    assert world.billing.charges()[0]["idempotency_key"] == calls[0]
    assert idem_key("t1", "charge", ARGS) != idem_key("t1", "charge", {**ARGS, "cents": 1})
    assert idem_key("t1", "charge", ARGS) != idem_key("t2", "charge", ARGS)


def test_a_completed_step_returns_its_recorded_result_without_firing(world):
    calls = []
    first = guarded("t1", "charge", charger(world, calls), ARGS, store=world.records)
    second = guarded("t1", "charge", charger(world, calls), ARGS, store=world.records)
    assert second == first
    assert len(calls) == 1
    assert len(world.billing.charges()) == 1


def test_an_in_flight_step_raises_needs_reconcile_and_fires_nothing(world):
    world.records.record_intent("t1:charge", idem_key("t1", "charge", ARGS), args_hash(ARGS))
    calls = []
    with pytest.raises(NeedsReconcile, match="may have landed") as caught:
        guarded("t1", "charge", charger(world, calls), ARGS, store=world.records)
    assert caught.value.step == "charge"
    assert calls == []


def test_other_arguments_for_the_same_step_are_refused(world):
    guarded("t1", "charge", charger(world), ARGS, store=world.records)
    with pytest.raises(GuardArgsMismatch, match="other arguments"):
        guarded("t1", "charge", charger(world), {**ARGS, "cents": 100}, store=world.records)
    assert len(world.billing.charges()) == 1


def _die_inside_the_effect(directory, after_effect: bool):
    """In a child: record intent, maybe charge, then SIGKILL before the result is recorded."""

    def child():
        world = World(directory)

        def charge_then_die(idem_key, **kwargs):
            if after_effect:
                world.billing.charge(**kwargs, idempotency_key=idem_key)
            kill_self()

        guarded("t1", "charge", charge_then_die, ARGS, store=world.records)

    assert run_forked(child) == "SIGKILL"


@pytest.mark.parametrize(("after_effect", "outcome"), [(True, "landed"), (False, "not_landed")])
def test_a_real_kill_between_intent_and_result_is_reconciled_to_one_charge(
        tmp_path, after_effect, outcome):
    directory = tmp_path / "world"
    World(directory).close()
    _die_inside_the_effect(directory, after_effect)

    world = World(directory)
    assert world.records.get("t1:charge").status == "in_flight"
    with pytest.raises(NeedsReconcile):
        guarded("t1", "charge", charger(world), ARGS, store=world.records)
    assert reconcile("t1", "charge", store=world.records,
                     lookup=world.billing.find_by_key) == outcome
    result = guarded("t1", "charge", charger(world), ARGS, store=world.records)
    assert result["invoice_id"] == "inv_9"
    assert len(world.billing.charges()) == 1
    assert reconcile("t1", "charge", store=world.records,
                     lookup=world.billing.find_by_key) == "nothing_to_do"


def test_a_refusal_leaves_no_intent_but_an_unknown_outcome_stays_in_flight(world):
    from course.world.billing import InvalidRequest, ResponseLost

    with pytest.raises(InvalidRequest):
        guarded("t1", "charge", charger(world), {**ARGS, "cents": -1}, store=world.records)
    assert world.records.get("t1:charge") is None

    world.billing.inject("lose_response")
    with pytest.raises(ResponseLost):
        guarded("t2", "charge", charger(world), ARGS, store=world.records)
    assert world.records.get("t2:charge").status == "in_flight"
    with pytest.raises(NeedsReconcile):
        guarded("t2", "charge", charger(world), ARGS, store=world.records)
    assert reconcile("t2", "charge", store=world.records,
                     lookup=world.billing.find_by_key) == "landed"
    assert guarded("t2", "charge", charger(world), ARGS, store=world.records)["replayed"] is True
    assert len(world.billing.charges()) == 1


def test_readable_keys_stay_within_the_provider_limit_and_distinct():
    from course.durable.guard import readable_key

    assert readable_key("t1", "charge", "inv_9") == "t1:charge:inv_9"
    long_a, long_b = "a" * 1000 + "1", "a" * 1000 + "2"
    key_a, key_b = readable_key(long_a, "email"), readable_key(long_b, "email")
    assert len(key_a) == len(key_b) == 255
    assert key_a != key_b
    assert key_a == readable_key(long_a, "email")


def test_a_very_long_thread_id_still_charges_once_and_emails_once():
    from course.crash import CrashHarness

    result = CrashHarness("keyed").run("email", "after_effect", thread_id="t" * 1000)
    assert result.killed_at == ("email", "after_effect")
    assert result.status == "completed"
    assert (result.charges, result.emails) == (1, 1)
