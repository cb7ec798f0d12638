"""``guarded``: intent before, result after, never a blind re-fire; ``reconcile`` settles."""

from __future__ import annotations

from types import SimpleNamespace

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
from course.grading.checks import Spy, kill_self, run_forked
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


@pytest.mark.parametrize(("after_effect", "outcome"), [(True, "landed"), (False, "sent_now")])
def test_a_real_kill_between_intent_and_result_is_reconciled_to_one_charge(
        tmp_path, after_effect, outcome):
    directory = tmp_path / "world"
    World(directory).close()
    _die_inside_the_effect(directory, after_effect)

    world = World(directory)
    assert world.records.get("t1:charge").status == "in_flight"
    with pytest.raises(NeedsReconcile):
        guarded("t1", "charge", charger(world), ARGS, store=world.records)
    spy = Spy(world.billing)
    # Reconcile the Stripe way: send the same request again, with the same key.
    assert reconcile("t1", "charge", charger(SimpleNamespace(billing=spy)),
                     store=world.records) == outcome
    assert spy.called("charge") == 1 and spy.called("find_by_key") == 0
    result = guarded("t1", "charge", charger(world), ARGS, store=world.records)
    assert result["invoice_id"] == "inv_9"
    assert result["replayed"] is (outcome == "landed")  # the provider's own stored answer
    assert len(world.billing.charges()) == 1
    assert reconcile("t1", "charge", charger(world),
                     store=world.records) == "nothing_to_do"


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
    assert reconcile("t2", "charge", world.resend("charge"), store=world.records) == "landed"
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


# ------------------------------------------------------------------ the spec, pinned
def test_a_recorded_none_or_empty_result_still_counts_as_done(world):
    for step, answer in (("noop", None), ("empty", {}), ("zero", 0), ("blank", "")):
        calls = []

        def effect(idem_key, answer=answer, calls=calls, **kwargs):
            calls.append(idem_key)
            return answer

        assert guarded("t1", step, effect, ARGS, store=world.records) == answer
        assert guarded("t1", step, effect, ARGS, store=world.records) == answer
        assert len(calls) == 1, f"a recorded {answer!r} must count as done, not fire again"


def test_changed_arguments_are_refused_even_while_in_flight(world):
    world.records.record_intent("t1:charge", idem_key("t1", "charge", ARGS), args_hash(ARGS),
                                args=ARGS)
    with pytest.raises(GuardArgsMismatch, match="first run with other arguments"):
        guarded("t1", "charge", charger(world), {**ARGS, "cents": 1}, store=world.records)
    assert world.billing.charges() == []


def test_a_declined_card_clears_the_intent_and_a_timeout_keeps_it(world):
    from course.world.billing import CardDeclined, ProviderTimeout

    sam = {"customer_id": "cus_sam", "invoice_id": "inv_13", "cents": 2900}
    with pytest.raises(CardDeclined):
        guarded("t1", "charge", charger(world), sam, store=world.records)
    assert world.records.get("t1:charge") is None  # definite refusal: nothing to reconcile
    world.billing.inject("timeout")
    with pytest.raises(ProviderTimeout):
        guarded("t2", "charge", charger(world), ARGS, store=world.records)
    assert world.records.get("t2:charge").status == "in_flight"  # unknown: stays in flight
    with pytest.raises(NeedsReconcile):
        guarded("t2", "charge", charger(world), ARGS, store=world.records)


def test_reconcile_waits_on_key_in_use_and_clears_a_replayed_decline(world):
    from course.world.billing import CardDeclined, KeyInUse

    world.records.record_intent("t1:charge", "k-busy", args_hash(ARGS), args=ARGS)
    busy = World(world.directory, in_flight_lease_s=30).billing
    busy._reserve("k-busy", _fingerprint_of(ARGS))  # another request is mid-flight with the key
    with pytest.raises(KeyInUse):
        reconcile("t1", "charge", world.resend("charge"), store=world.records)
    assert world.records.get("t1:charge").status == "in_flight"  # 409: try again later

    sam = {"customer_id": "cus_sam", "invoice_id": "inv_13", "cents": 2900}
    with pytest.raises(CardDeclined):
        world.billing.charge(**sam, idempotency_key="k-sam")
    world.records.record_intent("t2:charge", "k-sam", args_hash(sam), args=sam)
    with pytest.raises(CardDeclined):
        reconcile("t2", "charge", world.resend("charge"), store=world.records)
    assert world.records.get("t2:charge") is None  # the stored refusal is definite


def _fingerprint_of(args):
    from course.world.billing import _fingerprint

    return _fingerprint("charge", {**args, "currency": "usd"})


def test_a_keyless_provider_is_reconciled_by_listing_our_own_objects(world):
    key = "t1:receipt:cus_ada"
    world.records.record_intent("t1:email", key, args_hash({}), args={})
    assert reconcile("t1", "email", store=world.records, lookup=world.find_mail) == "not_landed"
    world.records.record_intent("t1:email", key, args_hash({}), args={})
    world.mail.send(to="ada@example.com", template="receipt", subject="s", body="b",
                    email_id=key)
    assert reconcile("t1", "email", store=world.records, lookup=world.find_mail) == "landed"
    assert world.records.get("t1:email").result["email_id"] == key


def test_reconcile_wants_exactly_one_way_to_ask(world):
    with pytest.raises(TypeError, match="exactly one of fn"):
        reconcile("t1", "charge", store=world.records)


def test_a_stale_owner_that_wakes_after_reconcile_is_told_in_a_sentence(world):
    from course.durable import StepSettledElsewhere

    woke = []

    def charge_then_sleep_through_a_reconcile(idem_key, **kwargs):
        answer = world.billing.charge(**kwargs, idempotency_key=idem_key)
        # while this caller "sleeps", a resumer reconciles the step
        assert reconcile("t1", "charge", world.resend("charge"), store=world.records) == "landed"
        woke.append(True)
        return answer

    with pytest.raises(StepSettledElsewhere, match="another process finished step 't1:charge'"):
        guarded("t1", "charge", charge_then_sleep_through_a_reconcile, ARGS, store=world.records)
    assert woke and len(world.billing.charges()) == 1


def test_needs_reconcile_is_not_retried_blindly_by_a_default_retry_policy(world):
    from typing import TypedDict

    from langgraph.graph import END, START, StateGraph
    from langgraph.types import RetryPolicy

    class Custom(Exception):
        pass

    world.records.record_intent("t1:charge", idem_key("t1", "charge", ARGS), args_hash(ARGS),
                                args=ARGS)
    attempts = {"guarded": 0, "custom": 0}

    class State(TypedDict):
        n: int

    def guarded_node(state):
        attempts["guarded"] += 1
        guarded("t1", "charge", charger(world), ARGS, store=world.records)
        return {"n": 1}

    def custom_node(state):
        attempts["custom"] += 1
        raise Custom("a plain Exception subclass")

    def graph_of(node):
        builder = StateGraph(State)
        builder.add_node("n", node, retry_policy=RetryPolicy(initial_interval=0.001, jitter=False))
        builder.add_edge(START, "n")
        builder.add_edge("n", END)
        return builder.compile()

    with pytest.raises(NeedsReconcile):
        graph_of(guarded_node).invoke({"n": 0})
    assert attempts["guarded"] == 1, "NeedsReconcile was retried blindly"
    with pytest.raises(Custom):  # the control: the same policy does retry other errors
        graph_of(custom_node).invoke({"n": 0})
    assert attempts["custom"] == RetryPolicy().max_attempts > 1
    assert world.billing.charges() == []
