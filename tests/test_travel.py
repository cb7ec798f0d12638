"""Marta's flight (course.travel): the airline's key rules, and real kills in both frameworks.

Every kill is a real SIGKILL in a forked process (:func:`course.grading.run_forked`) at the
crash point ``book_flight/after_effect``: the booking and its charge are committed at the
airline and nobody has recorded them yet. Each test asserts the kill landed there (the
process died by SIGKILL with exactly one booking made), then resumes in another new
process and counts bookings and charges.
"""

from __future__ import annotations

import time
import uuid
from pathlib import Path

import pytest

from course.base import crashpoints
from course.durable import NeedsReconcile
from course.grading import Spy, run_forked
from course.travel import (
    CONTINUE,
    TRIP,
    TravelWorld,
    book_naive,
    book_once,
    cancelled_calls,
    preload,
    run_booking,
    run_session,
    transcript,
    write_then_rewind,
)
from course.world import IdempotencyKeyMismatch, InvalidRequest, ResponseLost


@pytest.fixture(scope="module", autouse=True)
def warm():
    """Both frameworks imported once here, not again in every forked process."""
    preload()


@pytest.fixture(scope="module")
def claude_cli():
    """The real Claude Code CLI (course.travel.cli.find); skips, and fails in CI (tests/ci.py),
    when only the stand-in is here."""
    from course.travel.cli import find

    cli = find()
    if not cli.real:
        pytest.skip(cli.note)
    return cli


@pytest.fixture
def travel(tmp_path):
    world = TravelWorld(tmp_path / "world")
    yield world
    world.close()


# ------------------------------------------------------------------ the airline
def test_a_key_books_once_and_replays_the_booking(travel):
    first = travel.airline.book(customer_id="cus_marta", flight_id="VY1042", idempotency_key="k1")
    again = travel.airline.book(customer_id="cus_marta", flight_id="VY1042", idempotency_key="k1")
    assert (first["replayed"], again["replayed"]) == (False, True)
    assert again["id"] == first["id"] and again["charge_id"] == first["charge_id"]
    assert travel.count("bookings") == travel.count("charges") == 1


def test_a_key_reused_for_another_flight_is_refused_and_charges_nothing(travel):
    travel.airline.book(customer_id="cus_marta", flight_id="VY1042", idempotency_key="k1")
    with pytest.raises(IdempotencyKeyMismatch):
        travel.airline.book(customer_id="cus_marta", flight_id="IB2718", idempotency_key="k1")
    assert travel.count("charges") == 1


def test_without_a_key_every_call_books_and_the_ledger_flags_it(travel):
    for _ in range(2):
        travel.airline.book(customer_id="cus_marta", flight_id="VY1042")
    assert travel.ledger().rows == [
        {"customer": "cus_marta", "bookings": 2, "charges": 2, "double": True}]


def test_bad_input_gets_one_clear_line_and_books_nothing(travel):
    with pytest.raises(InvalidRequest, match="no such flight: 'XX1'; search for flights first"):
        travel.airline.book(customer_id="cus_marta", flight_id="XX1")
    with pytest.raises(ValueError, match="count 'bookings' or 'charges'"):
        travel.count("seats")
    assert travel.airline.bookings() == []


def test_search_reads_and_books_nothing(travel):
    found = travel.airline.search("mad", "bcn", "2026-03-14")
    assert [f["id"] for f in found] == ["UX7001", "VY1042", "IB2718"]
    assert travel.airline.bookings() == []


def test_book_once_settles_a_booking_left_in_flight_instead_of_booking_again(travel):
    def dies(*, customer_id, flight_id, idem_key):  # what a kill after the booking leaves
        travel.airline.book(customer_id=customer_id, flight_id=flight_id, idempotency_key=idem_key)
        raise NeedsReconcile("book_flight", idem_key)

    from course.durable import guarded
    with pytest.raises(NeedsReconcile):
        guarded(TRIP, "book_flight", dies, {"customer_id": "cus_marta", "flight_id": "VY1042"},
                store=travel.records)
    booking = book_once(travel, TRIP, "VY1042")
    assert booking["replayed"] is True
    assert travel.count("bookings") == 1


def test_book_once_settles_by_sending_the_same_request_again_never_by_a_lookup(travel):
    """Stripe has no lookup by key: the in-flight booking is settled by re-sending its key."""
    travel.airline.inject("lose_response")  # booked and charged; the answer never arrives
    with pytest.raises(ResponseLost):
        book_once(travel, TRIP, "VY1042")
    landed = travel.airline.bookings()[0]["idempotency_key"]
    travel.airline = airline = Spy(travel.airline)
    booking = book_once(travel, TRIP, "VY1042")
    assert booking["replayed"] is True and travel.count("bookings") == 1
    assert airline.called("find_by_key") == 0
    assert [kw["idempotency_key"] for name, kw in airline.calls if name == "book"] == [landed]
    assert book_once(travel, TRIP, "VY1042") == booking  # recorded now: no call at all
    assert airline.called("book") == 1


# -------------------------------------------------------------- real kills
def _killed_after_booking(body, world_dir) -> None:
    """Run ``body`` in a forked process armed to die at book_flight/after_effect; assert it did."""
    def armed():
        crashpoints.arm("book_flight", "after_effect")
        body()

    assert run_forked(armed, timeout_s=120) == "SIGKILL"
    world = TravelWorld(world_dir)
    try:
        assert world.count("bookings") == 1, "the kill did not land after the booking"
    finally:
        world.close()


def _counts(world_dir) -> tuple[int, int]:
    world = TravelWorld(world_dir)
    try:
        return world.count("bookings"), world.count("charges")
    finally:
        world.close()


@pytest.mark.parametrize(("book", "expected"), [(book_naive, (2, 2)), (book_once, (1, 1))],
                         ids=["naive", "guarded"])
def test_deep_agents_killed_after_booking_and_resumed(tmp_path, book, expected):
    world_dir, saver = tmp_path / "world", tmp_path / "checkpoints.db"
    _killed_after_booking(lambda: run_booking(world_dir, saver, book=book), world_dir)
    assert run_forked(lambda: run_booking(world_dir, saver, book=book, how="resume"),
                      timeout_s=120) == "exit 0"
    assert _counts(world_dir) == expected


def test_continue_is_new_input_the_pending_call_is_cancelled_and_booked_again(tmp_path):
    """Resuming with "Continue Marta's booking." drops the pending call; the model books anew."""
    world_dir, saver = tmp_path / "world", tmp_path / "checkpoints.db"
    _killed_after_booking(lambda: run_booking(world_dir, saver, book=book_naive), world_dir)
    messages = run_booking(world_dir, saver, book=book_naive, how="continue")
    assert cancelled_calls(messages) == ["book_flight"]
    assert messages[-1].content == "Marta is booked on VY1042 to Barcelona."
    assert _counts(world_dir) == (2, 2)


def test_invoke_none_resumes_the_pending_call_without_cancelling_it(tmp_path):
    world_dir, saver = tmp_path / "world", tmp_path / "checkpoints.db"
    _killed_after_booking(lambda: run_booking(world_dir, saver, book=book_once), world_dir)
    messages = run_booking(world_dir, saver, book=book_once, how="resume")
    assert cancelled_calls(messages) == []
    assert sum(m.type == "tool" and m.name == "book_flight" for m in messages) == 1
    assert _counts(world_dir) == (1, 1)


def test_deep_agents_on_postgres_survives_the_kill(tmp_path, postgres_uri):
    world_dir = tmp_path / "world"
    _killed_after_booking(lambda: run_booking(world_dir, postgres_uri, book=book_once), world_dir)
    assert run_forked(lambda: run_booking(world_dir, postgres_uri, book=book_once, how="resume"),
                      timeout_s=120) == "exit 0"
    assert _counts(world_dir) == (1, 1)


@pytest.mark.parametrize(("book", "expected"), [(book_naive, (2, 2)), (book_once, (1, 1))],
                         ids=["naive", "guarded"])
def test_claude_sdk_session_killed_after_booking_and_resumed(tmp_path, book, expected,
                                                            claude_cli):
    """On the real Claude Code CLI: the kill takes the CLI with the process hosting the tool."""
    world_dir, session = tmp_path / "world", str(uuid.uuid4())
    _killed_after_booking(lambda: run_session(world_dir, book=book, session_id=session,
                                              cli=claude_cli), world_dir)
    assert transcript(world_dir, session)[-1] == ("assistant", "call book_flight")
    pids = (world_dir / "claude-pids").read_text().split()
    deadline = time.monotonic() + 5
    while any(_running(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert pids and not any(_running(pid) for pid in pids), "the CLI outlived the kill"

    def resume():
        run = run_session(world_dir, CONTINUE, book=book, resume=session, cli=claude_cli)
        assert run.session_id == session and run.result and claude_cli.version in run.cli

    assert run_forked(resume, timeout_s=120) == "exit 0"
    assert _counts(world_dir) == expected


def _running(pid: str) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def test_fork_session_leaves_the_original_transcript_unchanged(tmp_path):
    world_dir = tmp_path / "world"
    first = run_session(world_dir)
    files = list((world_dir / "claude-config" / "projects").glob(f"*/{first.session_id}.jsonl"))
    assert len(files) == 1
    before = files[0].read_bytes()
    fork = run_session(world_dir, "Could she fly later instead?", resume=first.session_id,
                       fork_session=True)
    assert fork.session_id != first.session_id
    assert files[0].read_bytes() == before
    assert len(transcript(world_dir, fork.session_id)) == len(transcript(world_dir,
                                                                         first.session_id)) + 2
    resumed = run_session(world_dir, CONTINUE, resume=first.session_id)
    assert resumed.session_id == first.session_id and files[0].read_bytes() != before
    assert _counts(world_dir) == (1, 1)


def test_a_lost_session_id_is_a_clear_error_not_a_new_booking(tmp_path):
    world_dir = tmp_path / "world"
    run = run_session(world_dir, CONTINUE, resume=str(uuid.uuid4()))
    assert run.error.startswith("No conversation found with session ID") and run.result is None
    assert _counts(world_dir) == (0, 0)


def test_rewind_files_restores_the_file_not_the_conversation_nor_the_charge(tmp_path):
    itinerary = tmp_path / "world" / "desk" / "itinerary.txt"
    itinerary.parent.mkdir(parents=True)
    itinerary.write_text("VY1042 MAD-BCN 14 March 10:42")
    seen = write_then_rewind(tmp_path / "world", itinerary, "garbage")
    assert seen["written"] == "garbage"
    assert seen["after_rewind"] == itinerary.read_text() == "VY1042 MAD-BCN 14 March 10:42"
    assert seen["messages_after"] == seen["messages_before"] > 0
    assert (seen["bookings"], seen["charges"]) == (1, 1)


def test_a_wrong_way_to_run_the_booking_is_one_clear_line(tmp_path):
    with pytest.raises(ValueError, match="how must be one of ask, resume, continue, not 'retry'"):
        run_booking(tmp_path / "world", tmp_path / "cp.db", how="retry")
