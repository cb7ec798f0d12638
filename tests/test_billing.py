"""The billing simulator keeps every Stripe-like rule, and an error charges nothing."""

from __future__ import annotations

import multiprocessing
import threading
import time

import pytest

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


def test_find_by_key_reports_what_the_provider_committed(billing):
    assert billing.find_by_key("k1") is None
    billing.charge(**ADA, idempotency_key="k1")
    assert billing.find_by_key("k1")["invoice_id"] == "inv_9"
