"""Resume, branch, abandon: the policy, the checkpoint diagnosis and the decision."""

from __future__ import annotations

import shutil
import sqlite3

import pytest

from course.base import shown_path
from course.crash import CrashHarness
from course.durable.guard import NeedsReconcile
from course.durable.idempotency import CorruptRecord
from course.durable.recovery import (
    BudgetExhausted,
    Recovery,
    classify_error,
    decide,
    diagnose_checkpoints,
    select_recovery,
)
from course.world.billing import KeyInUse, ProviderTimeout, RateLimited, ResponseLost


# ------------------------------------------------------------------ the policy
@pytest.mark.parametrize(("error_type", "budget", "corrupt", "debugging", "expected"), [
    ("rate_limit", False, False, False, Recovery.RESUME),
    ("timeout", False, False, False, Recovery.RESUME),
    ("network", False, False, False, Recovery.RESUME),
    ("restart", False, False, False, Recovery.RESUME),
    ("timeout", False, True, False, Recovery.ABANDON),  # corrupt checkpoint
    ("rate_limit", True, False, False, Recovery.ABANDON),  # budget spent
    ("rate_limit", False, False, True, Recovery.BRANCH),  # someone is debugging
    ("ValueError", False, False, True, Recovery.BRANCH),
    ("ValueError", False, False, False, Recovery.ABANDON),  # unknown: escalate
    ("invalid_request", False, False, False, Recovery.ABANDON),
    ("", False, False, False, Recovery.ABANDON),
    # the order of the questions is part of the policy
    ("timeout", False, True, True, Recovery.ABANDON),  # corrupt beats debugging
    ("timeout", True, False, True, Recovery.ABANDON),  # budget beats debugging
])
def test_select_recovery(error_type, budget, corrupt, debugging, expected):
    assert select_recovery(error_type, budget, corrupt, debugging) is expected


def test_the_seeds_drill_rate_limit_then_corrupt_then_budget():
    assert [select_recovery("rate_limit", False, False, False),
            select_recovery("rate_limit", False, True, False),
            select_recovery("rate_limit", True, False, False)] == [
        Recovery.RESUME, Recovery.ABANDON, Recovery.ABANDON]
    assert [r.value for r in Recovery] == ["resume", "branch", "abandon"]


@pytest.mark.parametrize(("error", "kind"), [
    (RateLimited("429"), "rate_limit"),
    (KeyInUse("busy"), "rate_limit"),
    (ProviderTimeout("slow"), "timeout"),
    (ResponseLost("lost 200"), "timeout"),
    (TimeoutError(), "timeout"),
    (ConnectionResetError(), "network"),
    (NeedsReconcile("charge", "k1", "t1"), "restart"),
    (None, "restart"),
    (CorruptRecord("bad row"), "corrupt"),
    (sqlite3.DatabaseError("database disk image is malformed"), "corrupt"),
    (BudgetExhausted("spent $50"), "budget"),
    (ValueError("no such invoice"), "ValueError"),
    ("network", "network"),
])
def test_errors_are_classified(error, kind):
    assert classify_error(error) == kind


# --------------------------------------------------------- checkpoint diagnosis
@pytest.fixture(scope="module")
def harness_checkpoints(tmp_path_factory):
    """A checkpoint database written by real crash-harness workers (killed after charge,
    then resumed), with its WAL folded into the main file so the file holds the data."""
    harness = CrashHarness("keyed", root=tmp_path_factory.mktemp("crash"))
    result = harness.run("charge", "after_effect")
    assert result.killed_at == ("charge", "after_effect")
    db = result.run_dir / "checkpoints.db"
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return db, result.thread_id


@pytest.fixture
def checkpoints(harness_checkpoints, tmp_path):
    source, thread_id = harness_checkpoints
    copy = tmp_path / "checkpoints.db"
    shutil.copyfile(source, copy)
    return copy, thread_id


def test_a_healthy_database_is_resumable(checkpoints):
    db, thread_id = checkpoints
    found = diagnose_checkpoints(db, thread_id)
    assert found.ok and found.problem is None
    assert found.checkpoints >= 5 and found.threads == 1
    assert decide(RateLimited("429"), checkpoints=db, thread_id=thread_id) == (
        Recovery.RESUME, found_reason("rate_limit"))


def found_reason(kind: str) -> str:
    return (f"resume: {kind!r} is transient; invoke(None, config) on the same thread_id "
            "continues from the last checkpoint")


def test_a_truncated_database_is_abandoned_with_a_message_naming_it(checkpoints):
    db, thread_id = checkpoints
    size = db.stat().st_size
    with db.open("r+b") as file:
        file.truncate(size // 2 + 100)  # cut mid-page
    recovery, reason = decide(RateLimited("429"), checkpoints=db, thread_id=thread_id)
    assert recovery is Recovery.ABANDON
    assert "truncated" in reason and shown_path(db) in reason
    assert diagnose_checkpoints(db).problem == "truncated"


def test_a_database_cut_at_a_page_boundary_is_still_caught(checkpoints):
    db, _ = checkpoints
    with db.open("r+b") as file:
        file.truncate(2 * 4096)
    found = diagnose_checkpoints(db)
    assert found.problem == "truncated"
    assert "the header promises" in found.message and shown_path(db) in found.message


def test_bytes_overwritten_in_the_middle_make_it_malformed(checkpoints):
    db, thread_id = checkpoints
    middle = (db.stat().st_size // 4096 // 2) * 4096
    with db.open("r+b") as file:
        file.seek(middle)
        file.write(b"\x13" * 4096)
    found = diagnose_checkpoints(db, thread_id)
    assert found.problem == "malformed" and found.corrupt
    assert "malformed" in found.message and shown_path(db) in found.message
    recovery, reason = decide("timeout", checkpoints=found)
    assert recovery is Recovery.ABANDON and reason == f"abandon: {found.message}"


def test_an_unreadable_checkpoint_blob_is_named(checkpoints):
    db, thread_id = checkpoints
    conn = sqlite3.connect(db)
    conn.execute("UPDATE checkpoints SET checkpoint = x'c1c1c1' "
                 "WHERE rowid = (SELECT max(rowid) FROM checkpoints)")
    conn.commit()
    conn.close()
    found = diagnose_checkpoints(db, thread_id)
    assert found.problem == "unreadable_checkpoint"
    assert "cannot be read back" in found.message and thread_id in found.message


@pytest.mark.parametrize(("content", "problem", "words"), [
    (None, "missing", "does not exist"),
    (b"", "empty", "is empty"),
    (b"this is a text file, not a checkpoint database" * 5, "not_a_database", "not a SQLite"),
])
def test_files_that_are_not_checkpoints(tmp_path, content, problem, words):
    db = tmp_path / "checkpoints.db"
    if content is not None:
        db.write_bytes(content)
    found = diagnose_checkpoints(db)
    assert found.problem == problem
    assert words in found.message and shown_path(db) in found.message
    assert decide("timeout", checkpoints=db).recovery is Recovery.ABANDON


def test_a_database_without_the_saver_tables_is_diagnosed_without_being_changed(tmp_path):
    db = tmp_path / "other.db"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE notes (text)")
    conn.commit()
    conn.close()
    before = db.read_bytes()
    found = diagnose_checkpoints(db)
    assert found.problem == "missing_tables"
    assert "no checkpoints and no writes table" in found.message
    assert db.read_bytes() == before  # the diagnosis created nothing


def test_a_thread_without_checkpoints_cannot_be_resumed(checkpoints):
    db, _ = checkpoints
    found = diagnose_checkpoints(db, "thread-that-never-ran")
    assert found.problem == "no_checkpoint" and not found.corrupt
    assert "'thread-that-never-ran'" in found.message
    assert decide(None, checkpoints=found).recovery is Recovery.ABANDON


# ------------------------------------------------------------------ decisions
def test_decisions_explain_themselves(checkpoints):
    db, thread_id = checkpoints
    crash = decide(NeedsReconcile("charge", "k1", thread_id), checkpoints=db, thread_id=thread_id)
    assert crash.recovery is Recovery.RESUME and "reconcil" in crash.reason
    branch = decide(ValueError("wrong refund"), checkpoints=db, is_debugging=True)
    assert branch.recovery is Recovery.BRANCH
    assert branch.reason.startswith("branch: debugging") and "fork" in branch.reason
    assert "original run stays untouched" in branch.reason
    budget = decide(RateLimited("429"), checkpoints=db, budget_exhausted=True)
    assert budget.recovery is Recovery.ABANDON and "budget" in budget.reason
    spent = decide(BudgetExhausted("spent"))
    assert spent.recovery is Recovery.ABANDON and "budget" in spent.reason
    unknown = decide(ValueError("no such invoice"))
    assert unknown.recovery is Recovery.ABANDON and "'ValueError'" in unknown.reason
    assert "escalate" in unknown.reason
    corrupt = decide(CorruptRecord("record t1:charge is corrupt"))
    assert corrupt.recovery is Recovery.ABANDON and "corrupt" in corrupt.reason


def test_messages_name_a_temporary_file_by_its_folder_and_name_and_others_in_full(tmp_path):
    assert shown_path(tmp_path / "run-1" / "checkpoints.db") == "…/run-1/checkpoints.db"
    assert shown_path("/srv/agent/checkpoints.db") == "/srv/agent/checkpoints.db"
    found = diagnose_checkpoints(tmp_path / "run-1" / "checkpoints.db")
    assert "…/run-1/checkpoints.db does not exist" in found.message
    assert str(tmp_path) not in found.message
