"""The frozen worker, end to end: a paused process wakes up after its time ran out.

Each test freezes a real worker (SIGSTOP) in the middle of its charge, after the
provider reserved the key and before it committed. Meanwhile a resumer finds the
guard's record in flight, reconciles it the Stripe way (the same request, the
same key) and charges. Then the frozen worker wakes up and tries to commit.

- ``fenced=False`` rebuilds the old design (the provider's late commit is not
  checked against its reservation): two charges, the bug this fixes.
- ``fenced=True``: the provider rolls the late commit back and answers with the
  stored charge; the guard refuses the stale worker's record in a sentence.
  Exactly one charge, with the guard's records and the thread leases on SQLite
  and on Postgres.
"""

from __future__ import annotations

import time

import pytest

from course.crash import FrozenChild, freeze_here, frozen_worker_demo
from course.durable import LeaseLost, NeedsReconcile, SQLiteLeases, guarded, reconcile
from course.durable.lease import PostgresLeases
from course.world import KeyInUse, World

ARGS = {"customer_id": "cus_ada", "invoice_id": "inv_9", "cents": 2900, "currency": "usd"}
BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


@pytest.fixture(params=BACKENDS)
def backend(request, tmp_path):
    """Opens (records store, lease store) for one process; the world's files stay SQLite."""
    if request.param == "sqlite":
        def open_stores(world):
            return world.records, SQLiteLeases(tmp_path / "leases.db")
    else:
        from course.durable import PostgresStore

        uri = request.getfixturevalue("postgres_uri")

        def open_stores(world):
            return PostgresStore(uri), PostgresLeases(uri)
    return open_stores


def capture(world):
    def charge(idem_key, **args):
        return world.billing.charge(**args, idempotency_key=idem_key)
    return charge


def frozen_worker(directory, open_stores, *, fenced: bool, thread_lease_s: float | None):
    """The first worker: (maybe) takes the thread lease, records intent, reserves the key at
    the provider, and freezes there."""

    def body():
        world = World(directory, in_flight_lease_s=0.05, fenced=fenced,
                      on_processing=freeze_here)
        records, leases = open_stores(world)
        token = 1
        if thread_lease_s is not None:
            assert leases.acquire("t1", "worker-1", ttl_s=thread_lease_s)
            token = leases.holder("t1").fence
        return guarded("t1", "charge", capture(world), ARGS, store=records, fence=token)

    child = FrozenChild(body)
    child.wait_frozen()
    return child


def resume(world, records, leases, *, use_lease: bool) -> str:
    """What a resumer does: (lease,) guard says in flight, reconcile by re-sending, resume."""
    fence = None
    if use_lease:
        while not leases.acquire("t1", "resumer-1", ttl_s=30):  # the frozen one's time runs out
            time.sleep(0.01)
        fence = leases.holder("t1").fence
    with pytest.raises(NeedsReconcile):
        guarded("t1", "charge", capture(world), ARGS, store=records)
    while True:
        try:
            outcome = reconcile("t1", "charge", world.resend("charge"), store=records,
                                fence=fence)
            break
        except KeyInUse:  # 409 while the provider's hold on the key lasts
            time.sleep(0.01)
    assert guarded("t1", "charge", capture(world), ARGS, store=records)["invoice_id"] == "inv_9"
    return outcome


@pytest.mark.parametrize("use_lease", [False, True], ids=["slow-provider", "thread-lease"])
@pytest.mark.parametrize(("fenced", "charges"), [(False, 2), (True, 1)],
                         ids=["old-unfenced", "fenced"])
def test_a_frozen_worker_that_wakes_up_late_charges_once_only_with_fencing(
        tmp_path, backend, use_lease, fenced, charges):
    directory = tmp_path / "world"
    World(directory).close()
    frozen = frozen_worker(directory, backend, fenced=fenced,
                           thread_lease_s=0.1 if use_lease else None)
    world = World(directory, in_flight_lease_s=0.05, fenced=fenced)
    records, leases = backend(world)
    try:
        assert resume(world, records, leases, use_lease=use_lease) == "sent_now"
    finally:
        late = frozen.thaw()
    charged = world.billing.charges()
    assert len(charged) == charges, world.ledger()
    assert records.get("t1:charge").result["id"] == charged[0]["id"]
    # The woken worker is stopped with a sentence, not a bare "no in-flight record".
    assert late["error"].startswith("StepSettledElsewhere: another process finished step"), late
    if use_lease:
        with pytest.raises(LeaseLost, match="'worker-1' lost its lease"):
            leases.check("t1", "worker-1", 1)
    leases.close()
    world.close()


@pytest.mark.parametrize(("fenced", "charges"), [(False, 2), (True, 1)])
def test_the_lesson_demo_shows_the_double_charge_only_without_fencing(tmp_path, fenced, charges):
    run = frozen_worker_demo(tmp_path / "demo", fenced=fenced)
    assert run.resumer == "sent_now"  # the frozen call had not committed; the resumer's did
    assert run.charges == charges
    assert [r["charges"] for r in run.ledger.rows] == [charges]
    assert run.woken["error"].startswith("StepSettledElsewhere: another process finished")


def test_the_lesson_demo_keeps_the_409s_the_resumer_got_while_the_key_was_held(tmp_path):
    # Held for 3 s, the resumer's first same-key request comes long before the hold ends.
    run = frozen_worker_demo(tmp_path / "demo", fenced=True, hold_s=3)
    assert run.refused, "the resumer's request inside the hold should have been refused"
    assert all(r.startswith("KeyInUse: a request with idempotency key") for r in run.refused)
    assert run.resumer == "sent_now" and run.charges == 1


def test_a_frozen_writer_never_stops_a_world_from_opening_and_a_lock_wait_says_which_file(
        tmp_path):
    from course.storage.sqlite import DatabaseBusy, connect

    directory = tmp_path / "world"
    World(directory).close()

    def writer_frozen_mid_transaction():
        conn = connect(directory / "billing.db")
        conn.execute("BEGIN IMMEDIATE")  # holds the write lock...
        conn.execute("UPDATE clock SET offset_s = offset_s + 1")
        freeze_here()  # ...while frozen
        conn.execute("ROLLBACK")
        return "rolled back"

    frozen = FrozenChild(writer_frozen_mid_transaction)
    try:
        frozen.wait_frozen()
        world = World(directory)  # no write transaction just to open
        assert world.billing.charges() == [] and world.ledger().rows == []
        world.billing.close()
        world.billing.busy_timeout_ms = 200  # the next connection waits 0.2 s, not 10 s
        with pytest.raises(DatabaseBusy, match=r"billing\.db stayed locked by another process"):
            world.billing.charge(**ARGS, idempotency_key="k1")
        assert world.billing.charges() == []
    finally:
        assert frozen.thaw() == {"result": "rolled back"}
    assert world.billing.charge(**ARGS, idempotency_key="k1")["replayed"] is False
    world.close()


# ------------------------------------------------------------- freezes in the fuzzer
def test_fault_plans_are_reproducible_and_pause_only_when_asked():
    from course.crash.fuzz import PAUSE_MAX_S, Profile, plan_faults

    profile = Profile(0.1, (0.04, 0.09))
    paused = plan_faults(3, 400, profile, "pause")
    assert paused == plan_faults(3, 400, profile, "pause") != plan_faults(4, 400, profile, "pause")
    assert paused[:50] == plan_faults(3, 50, profile, "pause")  # more draws extend the list
    pauses = [f.pause_for_s for f in paused if f.pause_for_s is not None]
    assert 120 < len(pauses) < 280 and all(0 <= p <= PAUSE_MAX_S for p in pauses)
    follow_ups = [f.then_kill for f in paused if f.then_kill]
    assert 60 < len(follow_ups) < 200 and {stage for stage, _ in follow_ups} == {2, 3}
    killed_only = plan_faults(3, 400, profile, "kill")
    assert all(f.pause_for_s is None for f in killed_only)
    with pytest.raises(ValueError, match="unknown fault 'melt'"):
        plan_faults(3, 1, profile, "melt")


def test_a_paused_worker_is_woken_while_a_resumer_works_and_charges_once():
    from course.crash import CrashHarness

    harness = CrashHarness("keyed")
    result = harness.run(kill_after_s=0.0, pause_for_s=0.3)  # frozen at once, woken later
    outcomes = [a.outcome for a in result.attempts]
    assert outcomes[0] == "paused", outcomes  # the freeze landed
    assert result.attempts[-1].armed == "woken"  # and the woken worker was waited for
    assert result.status == "completed"
    assert (result.charges, result.emails) == (1, 1), result.attempts


def test_a_follow_up_kill_lands_in_the_resumer():
    from course.crash import CrashHarness

    result = CrashHarness("keyed").run("charge", "after_effect", then_kill=(2, 0.0))
    assert [a.outcome for a in result.attempts[:2]] == ["killed", "killed"]  # both landed
    assert result.status == "completed"
    assert (result.charges, result.emails) == (1, 1)


def test_a_kill_in_the_middle_of_a_reconciliation_is_settled_by_the_next_one(tmp_path):
    import json

    from course.crash import CrashHarness
    from course.durable import args_hash, idem_key

    harness = CrashHarness("keyed", root=tmp_path)
    run_dir = harness.fresh_run_dir("reconcile-kill")
    world = World(run_dir)
    world.records.record_intent("t1:charge", idem_key("t1", "charge", ARGS), args_hash(ARGS),
                                args=ARGS)  # a worker died between intent and charge
    (run_dir / "reconcile.json").write_text(json.dumps({"session_id": "t1", "step": "charge"}))
    killed = harness._reconcile(run_dir, world, kill_after_s=0.0)
    assert killed is not None and killed.outcome == "killed"  # the kill landed
    assert harness._reconcile(run_dir, world) is None  # the next reconciliation settles it
    assert world.records.get("t1:charge").status == "done"
    assert len(world.billing.charges()) == 1
    world.close()


def test_the_command_line_adds_pauses_to_the_last_line():
    import re
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "course.crash", "fuzz", "--kills", "6", "--seed", "2",
         "--fault", "pause", "--profile", "40,5,20", "--no-progress"],
        capture_output=True, text=True, check=True, timeout=300)
    last = done.stdout.strip().splitlines()[-1]
    found = re.fullmatch(r"kills=(\d+) double_charges=0 double_emails=0 lost=0 "
                         r"reconciled=\d+ pauses=(\d+) windows=\d+ in_windows=\d+ "
                         r"min_window=\d+", last)
    assert found, last
    # every landed fault is a kill or a pause (on a very busy machine the redraws may give
    # up before all 6 landed; the landed line says how many did)
    landed = re.search(r"landed=(\d+)/6 kills and pauses", done.stdout)
    assert landed, done.stdout
    assert int(found.group(1)) + int(found.group(2)) == int(landed.group(1)) >= 1


def test_a_record_kept_without_its_arguments_is_reconciled_by_listing_our_own_charges(world):
    from course.crash.resume import reconcile_pending
    from course.durable import args_hash

    world.records.record_intent("t1:charge", "k-landed", args_hash(ARGS))  # no args kept
    world.billing.charge(**ARGS, idempotency_key="k-landed")
    assert reconcile_pending(world, "t1", "charge", poll_s=0.01) == "landed"
    assert world.records.get("t1:charge").result["idempotency_key"] == "k-landed"
    world.records.record_intent("t2:charge", "k-never", args_hash(ARGS))
    assert reconcile_pending(world, "t2", "charge", poll_s=0.01) == "not_landed"
    assert world.records.get("t2:charge") is None and len(world.billing.charges()) == 1


def test_files_made_before_fencing_gain_their_columns(tmp_path):
    import sqlite3

    from course.durable import SQLiteStore
    from course.world import BillingSimulator

    old = sqlite3.connect(tmp_path / "records.db")
    old.executescript(
        "CREATE TABLE step_records (record_id TEXT PRIMARY KEY, idem_key TEXT NOT NULL, "
        "args_hash TEXT NOT NULL, status TEXT NOT NULL, result TEXT);"
        "INSERT INTO step_records VALUES ('old:charge', 'k', 'h', 'done', '{}');"
        "CREATE TABLE idempotency_keys (key TEXT PRIMARY KEY, fingerprint TEXT NOT NULL, "
        "status TEXT NOT NULL, response TEXT, created_at TEXT NOT NULL, "
        "lease_until REAL NOT NULL);")
    old.close()
    store = SQLiteStore(tmp_path / "records.db")
    assert store.get("old:charge").fence == 1
    store.record_intent("t1:charge", "k1", "h1", args={"cents": 1})
    assert store.get("t1:charge").args == {"cents": 1}
    store.close()
    billing = BillingSimulator(tmp_path / "records.db")
    assert billing.charge(**ARGS, idempotency_key="k1")["replayed"] is False
    assert billing.charge(**ARGS, idempotency_key="k1")["replayed"] is True
    billing.close()
