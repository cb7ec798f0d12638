"""The billing simulator keeps every Stripe-like rule, and an error charges nothing."""

from __future__ import annotations

import multiprocessing
import threading
import time
from datetime import timedelta

import pytest

import course.world.billing as module
from course.crash import FrozenChild, freeze_here
from course.world.billing import (
    BillingSimulator,
    CardDeclined,
    IdempotencyKeyMismatch,
    InvalidRequest,
    KeyInUse,
    ProviderTimeout,
    RateLimited,
    ResponseLost,
)

ADA = {"customer_id": "cus_ada", "invoice_id": "inv_9", "cents": 2900}


def test_a_keyed_charge_is_captured_once_and_replayed(billing):
    first = billing.charge(**ADA, idempotency_key="k1")
    second = billing.charge(**ADA, idempotency_key="k1")
    assert first["replayed"] is False and second["replayed"] is True
    assert second["id"] == first["id"]
    assert len(billing.charges()) == 1


def test_calls_without_a_key_are_never_deduplicated(billing):
    billing.charge(**ADA)
    billing.charge(**ADA)
    assert len(billing.charges()) == 2


def test_same_key_other_parameters_is_a_clear_error_and_charges_nothing(billing):
    billing.charge(**ADA, idempotency_key="k1")
    with pytest.raises(IdempotencyKeyMismatch, match=r"other parameters.*nothing was charged"):
        billing.charge(**{**ADA, "cents": 3000}, idempotency_key="k1")
    assert [c["cents"] for c in billing.charges()] == [2900]


def test_a_stored_error_is_replayed_too(billing):
    sam = {"customer_id": "cus_sam", "invoice_id": "inv_13", "cents": 2900}
    with pytest.raises(CardDeclined):
        billing.charge(**sam, idempotency_key="sam-1")
    with pytest.raises(CardDeclined):
        billing.charge(**sam, idempotency_key="sam-1")
    assert billing.charges() == []


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"cents": 0}, "must be positive"),
        ({"cents": -500}, "must be positive"),
        ({"cents": 29.0}, "whole number of cents"),
        ({"cents": "2900"}, "whole number of cents"),
        ({"cents": True}, "whole number of cents"),
        ({"cents": 10**12}, "over the limit"),
        ({"currency": "doge"}, "unknown currency"),
        ({"invoice_id": "inv_404"}, "unknown invoice"),
        ({"customer_id": "cus_nobody"}, "unknown customer"),
        ({"customer_id": "cus_lin"}, "does not belong"),
        ({"currency": "eur"}, "billed in USD"),
        ({"idempotency_key": "x" * 256}, "256 characters long; the limit is 255"),
        ({"idempotency_key": ""}, "non-empty string"),
    ],
)
def test_invalid_requests_are_rejected_and_charge_nothing(billing, change, message):
    with pytest.raises(InvalidRequest, match=message):
        billing.charge(**{**ADA, "currency": "usd", **change})
    assert billing.charges() == []
    assert billing.keys() == []


def test_a_key_of_exactly_255_characters_is_accepted(billing):
    billing.charge(**ADA, idempotency_key="k" * 255)
    assert len(billing.charges()) == 1


def test_keys_are_pruned_after_24_hours_and_then_mean_a_new_request(billing):
    billing.charge(**ADA, idempotency_key="k1")
    billing.advance_clock(hours=23)
    assert billing.charge(**ADA, idempotency_key="k1")["replayed"] is True
    billing.advance_clock(hours=2)
    again = billing.charge(**ADA, idempotency_key="k1")
    assert again["replayed"] is False
    assert len(billing.charges()) == 2


def test_the_clock_cannot_go_back(billing):
    with pytest.raises(ValueError, match="only moves forward"):
        billing.advance_clock(hours=-1)


def test_lost_response_commits_the_charge_and_a_keyed_retry_finds_it(billing):
    billing.inject("lose_response")
    with pytest.raises(ResponseLost, match="committed"):
        billing.charge(**ADA, idempotency_key="k1")
    assert len(billing.charges()) == 1  # it happened, the caller just never heard
    retry = billing.charge(**ADA, idempotency_key="k1")
    assert retry["replayed"] is True
    assert len(billing.charges()) == 1


def test_lost_response_without_a_key_makes_the_retry_a_second_charge(billing):
    billing.inject("lose_response")
    with pytest.raises(ResponseLost):
        billing.charge(**ADA)
    billing.charge(**ADA)
    assert len(billing.charges()) == 2


@pytest.mark.parametrize(("fault", "error"), [("timeout", ProviderTimeout),
                                               ("rate_limit", RateLimited)])
def test_timeouts_and_rate_limits_happen_before_anything_is_charged(billing, fault, error):
    billing.inject(fault, times=2)
    for _ in range(2):
        with pytest.raises(error) as caught:
            billing.charge(**ADA, idempotency_key="k1")
        assert caught.value.retryable
    assert billing.charges() == []
    assert billing.charge(**ADA, idempotency_key="k1")["replayed"] is False


def test_unknown_fault_names_are_rejected(billing):
    with pytest.raises(ValueError, match="unknown fault"):
        billing.inject("gremlins")


def test_same_key_while_the_first_call_is_in_flight_is_a_retryable_conflict(tmp_path):
    slow = BillingSimulator(tmp_path / "b.db", processing_delay_s=0.5, in_flight_lease_s=5)
    other = BillingSimulator(tmp_path / "b.db")
    started = threading.Event()
    result: dict = {}

    def first_call():
        started.set()
        result["first"] = slow.charge(**ADA, idempotency_key="k1")

    thread = threading.Thread(target=first_call)
    thread.start()
    assert started.wait(timeout=10)
    wait_until_in_flight(other, "k1")  # the first call has recorded its key: it is in flight
    with pytest.raises(KeyInUse, match="still being processed") as caught:
        other.charge(**ADA, idempotency_key="k1")
    assert caught.value.retryable
    thread.join(timeout=30)
    assert not thread.is_alive()
    assert other.charge(**ADA, idempotency_key="k1")["id"] == result["first"]["id"]
    assert len(other.charges()) == 1


def wait_until_in_flight(billing: BillingSimulator, key: str, timeout_s: float = 10) -> None:
    """Return once the provider reports a call with ``key`` as in flight."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            billing.find_by_key(key)
        except KeyInUse:
            return
        time.sleep(0.005)
    raise AssertionError(f"no call with key {key!r} went in flight within {timeout_s} s")


def _charge_in_child(path, key, queue):
    billing = BillingSimulator(path, processing_delay_s=0.05)
    try:
        queue.put(billing.charge(**ADA, idempotency_key=key)["id"])
    except KeyInUse:
        queue.put("in-use")


def test_two_processes_with_one_key_charge_once(tmp_path):
    path = tmp_path / "b.db"
    BillingSimulator(path)
    queue = multiprocessing.get_context("fork").Queue()
    children = [multiprocessing.get_context("fork").Process(
        target=_charge_in_child, args=(path, "k1", queue)) for _ in range(4)]
    for child in children:
        child.start()
    answers = [queue.get(timeout=30) for _ in children]  # a child that died raises Empty
    for child in children:
        child.join(timeout=30)
        assert child.exitcode == 0
    assert len(BillingSimulator(path).charges()) == 1
    assert len({a for a in answers if a != "in-use"}) == 1


def test_refunds_cannot_exceed_the_invoice(billing):
    billing.refund(customer_id="cus_ada", invoice_id="inv_9", cents=2000, idempotency_key="r1")
    with pytest.raises(InvalidRequest, match="more than the invoice"):
        billing.refund(customer_id="cus_ada", invoice_id="inv_9", cents=1000,
                       idempotency_key="r2")
    assert len(billing.refunds()) == 1


def test_find_by_key_is_a_simulator_convenience_that_reports_what_was_committed(billing):
    assert "not a Stripe feature" in BillingSimulator.find_by_key.__doc__
    assert billing.find_by_key("k1") is None
    billing.charge(**ADA, idempotency_key="k1")
    assert billing.find_by_key("k1")["invoice_id"] == "inv_9"


# ------------------------------------------------------------ Stripe, precisely
def test_keys_may_be_pruned_at_24_hours_at_the_earliest(tmp_path, billing):
    with pytest.raises(ValueError, match="at least 24 h old"):
        BillingSimulator(tmp_path / "other.db", keep_keys_for=timedelta(hours=23))
    keeper = BillingSimulator(tmp_path / "keeper.db", keep_keys_for=timedelta(hours=48))
    keeper.charge(**ADA, idempotency_key="k1")
    keeper.advance_clock(hours=30)
    assert keeper.charge(**ADA, idempotency_key="k1")["replayed"] is True  # kept longer: fine
    billing.charge(**ADA, idempotency_key="k1")
    billing.advance_clock(hours=24)  # exactly 24 h: now it may be forgotten
    assert billing.charge(**ADA, idempotency_key="k1")["replayed"] is False
    assert "a minimum, not an expiry" in module.__doc__


def test_a_failed_validation_stores_nothing_so_a_fixed_retry_is_judged_afresh(billing):
    billing.refund(customer_id="cus_ada", invoice_id="inv_9", cents=2000, idempotency_key="r0")
    with pytest.raises(InvalidRequest, match="more than the invoice"):
        billing.refund(customer_id="cus_ada", invoice_id="inv_9", cents=1000,
                       idempotency_key="r1")
    stored = billing.keys()
    assert [k["key"] for k in stored] == ["r0"]  # nothing stored under r1
    with pytest.raises(InvalidRequest, match="must be positive"):
        billing.charge(**{**ADA, "cents": -1}, idempotency_key="k1")
    assert billing.charge(**ADA, idempotency_key="k1")["replayed"] is False  # not replayed


def test_a_conflicting_concurrent_call_stores_nothing(tmp_path):
    path = tmp_path / "billing.db"
    billing = BillingSimulator(path)
    frozen = _frozen_charge(path, "k1", lease_s=30)  # still processing, and will be for long
    try:
        with pytest.raises(KeyInUse, match="still being processed") as conflict:
            billing.charge(**ADA, idempotency_key="k1")
        assert conflict.value.retryable
        stored = billing.keys()
        assert [(k["key"], k["status"]) for k in stored] == [("k1", "in_flight")]
    finally:
        first = frozen.thaw()
    assert first["result"]["replayed"] is False
    assert len(billing.charges()) == 1


def test_a_stored_decline_is_replayed_and_other_parameters_still_charge_nothing(billing):
    sam = {"customer_id": "cus_sam", "invoice_id": "inv_13", "cents": 2900}
    with pytest.raises(CardDeclined) as first:
        billing.charge(**sam, idempotency_key="sam-1")
    with pytest.raises(CardDeclined) as again:
        billing.charge(**sam, idempotency_key="sam-1")
    assert str(again.value) == str(first.value)
    with pytest.raises(IdempotencyKeyMismatch, match="nothing was charged"):
        billing.charge(**ADA, idempotency_key="sam-1")
    assert billing.charges() == []


# ---------------------------------------------------------------------- fencing
def _frozen_charge(path, key: str, *, fenced: bool = True, lease_s: float = 0.05) -> FrozenChild:
    """A caller whose provider call freezes after the key is reserved, before the commit:
    a provider slower than its in-flight lease, or a worker paused mid-call."""

    def body():
        slow = BillingSimulator(path, in_flight_lease_s=lease_s, fenced=fenced,
                                on_processing=freeze_here)
        return slow.charge(**ADA, idempotency_key=key)

    child = FrozenChild(body)
    child.wait_frozen()
    return child


def _wait_for_the_reservation_to_run_out(billing, key: str) -> None:
    while True:
        row = billing._conn.execute(  # the simulator's own table
            "SELECT lease_until FROM idempotency_keys WHERE key = ?", (key,)).fetchone()
        assert row is not None, "the frozen caller should have reserved the key"
        if row["lease_until"] < time.time():
            return
        time.sleep(0.01)


@pytest.mark.parametrize(("fenced", "charges"), [(False, 2), (True, 1)])
def test_a_caller_frozen_past_its_reservation_charges_twice_only_without_fencing(
        tmp_path, fenced, charges):
    path = tmp_path / "billing.db"
    billing = BillingSimulator(path, fenced=fenced)
    frozen = _frozen_charge(path, "k1", fenced=fenced)
    try:
        _wait_for_the_reservation_to_run_out(billing, "k1")
        retry = billing.charge(**ADA, idempotency_key="k1")  # same key, same parameters
        assert retry["replayed"] is False  # the frozen call had not committed: this one does
    finally:
        late = frozen.thaw()
    assert len(billing.charges()) == charges
    if fenced:  # the late commit was rolled back and answered with the stored result
        assert late["result"]["id"] == retry["id"] and late["result"]["replayed"] is True


def test_a_late_commit_while_the_new_owner_is_still_at_work_is_refused_in_words(tmp_path):
    path = tmp_path / "billing.db"
    billing = BillingSimulator(path)
    first = _frozen_charge(path, "k1")
    second = None
    try:
        _wait_for_the_reservation_to_run_out(billing, "k1")
        second = _frozen_charge(path, "k1", lease_s=30)  # took the key over, then froze
    finally:
        late = first.thaw()
        now = second.thaw() if second else None
    assert late["error"].startswith("ReservationSuperseded: ") and "charged nothing" in late[
        "error"]
    assert now is not None and now["result"]["replayed"] is False
    assert [c["id"] for c in billing.charges()] == [now["result"]["id"]]


def test_an_expired_in_flight_key_is_never_reported_as_never_landed_while_it_could_commit(
        tmp_path):
    path = tmp_path / "billing.db"
    billing = BillingSimulator(path)
    frozen = _frozen_charge(path, "k1", lease_s=1.0)
    try:
        with pytest.raises(KeyInUse):  # while its hold lasts: 409, like Stripe
            billing.find_by_key("k1")
        _wait_for_the_reservation_to_run_out(billing, "k1")
        assert billing.find_by_key("k1") is None  # revoked first, then "never landed"
    finally:
        late = frozen.thaw()
    assert late["error"].startswith("ReservationSuperseded: ")
    assert billing.charges() == []  # "never landed" stayed true
    assert billing.charge(**ADA, idempotency_key="k1")["replayed"] is False
    assert len(billing.charges()) == 1
