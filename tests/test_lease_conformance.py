"""One conformance suite for the thread-lease backends (SQLite and Postgres).

Processes are real: a holder that is "dead" was SIGKILLed, a race is eight
forked processes asking at the same moment.
"""

from __future__ import annotations

import os
import select
import signal
import time

import pytest

from course.durable.lease import (
    InProgressElsewhere,
    LeaseLost,
    PostgresLeases,
    SQLiteLeases,
    process_alive,
    process_start,
)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def open_leases(request, tmp_path):
    """A function that opens a new handle on one shared lease store (one per process)."""
    if request.param == "sqlite":
        def opener():
            return SQLiteLeases(tmp_path / "leases.db")
    else:
        uri = request.getfixturevalue("postgres_uri")

        def opener():
            return PostgresLeases(uri)
    handles = []

    def open_one():
        handles.append(opener())
        return handles[-1]

    yield open_one
    for handle in handles:
        handle.close()


@pytest.fixture
def leases(open_leases):
    return open_leases()


def in_child(body) -> int:
    """Fork; the child runs ``body()`` and exits with its return value (1 if it raised)."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            code = body()
        finally:
            os._exit(code)
    return pid


def test_a_free_lease_is_taken_and_shows_its_holder(leases):
    before = leases.now()
    assert leases.acquire("t1", "resumer-1", ttl_s=30) is True
    held = leases.holder("t1")
    assert (held.thread_id, held.owner, held.pid) == ("t1", "resumer-1", os.getpid())
    assert before + 29 < held.expires_at < leases.now() + 31
    assert leases.holder("t2") is None


def test_a_live_holder_keeps_it_and_others_are_refused(leases):
    assert leases.acquire("t1", "resumer-1", ttl_s=30)
    assert leases.acquire("t1", "resumer-2", ttl_s=30) is False
    assert leases.holder("t1").owner == "resumer-1"
    assert leases.acquire("t2", "resumer-2", ttl_s=30) is True  # other threads are separate


def test_the_owner_renews_its_own_lease(leases):
    assert leases.acquire("t1", "resumer-1", ttl_s=5)
    first = leases.holder("t1").expires_at
    assert leases.acquire("t1", "resumer-1", ttl_s=60) is True
    assert leases.holder("t1").expires_at > first + 50


def test_only_the_owner_can_release(leases):
    leases.acquire("t1", "resumer-1", ttl_s=30)
    assert leases.release("t1", "resumer-2") is False
    assert leases.holder("t1").owner == "resumer-1"
    assert leases.release("t1", "resumer-1") is True
    assert leases.holder("t1") is None
    assert leases.release("t1", "resumer-1") is False
    assert leases.acquire("t1", "resumer-2", ttl_s=30) is True


def test_an_expired_lease_is_taken_over(leases):
    assert leases.acquire("t1", "resumer-1", ttl_s=0.05)
    assert leases.acquire("t1", "resumer-2", ttl_s=30) is False
    deadline = time.monotonic() + 10  # poll: taken over as soon as the 50 ms have run out
    while not leases.acquire("t1", "resumer-2", ttl_s=30):
        assert time.monotonic() < deadline, "a lease 50 ms long was never taken over"
        time.sleep(0.01)
    assert leases.holder("t1").owner == "resumer-2"


def test_a_lease_held_by_a_sigkilled_process_is_taken_over(open_leases):
    leases = open_leases()
    ready_r, ready_w = os.pipe()
    hold_r, _ = os.pipe()

    def holder() -> int:
        mine = open_leases()
        ok = mine.acquire("t1", "worker-1", ttl_s=300)
        os.write(ready_w, b"1" if ok else b"0")
        os.read(hold_r, 1)  # wait here, alive, until killed
        return 0

    pid = in_child(holder)
    os.close(ready_w)  # so a child that dies early gives an empty read, not a hang
    assert os.read(ready_r, 1) == b"1"
    try:
        # Alive and within its time: nobody else gets it, and hold() says so in words.
        assert leases.acquire("t1", "resumer-1", ttl_s=30) is False
        with pytest.raises(InProgressElsewhere) as busy, leases.hold("t1", "resumer-1"):
            pytest.fail("the block must not run while another process holds the lease")
        message = str(busy.value)
        assert "'t1'" in message and "'worker-1'" in message and "'resumer-1'" in message
        assert f"pid {pid}" in message and "in progress elsewhere" in message
        assert busy.value.holder.owner == "worker-1"
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    # Dead, with 300 s still on its lease: the next resumer takes over at once.
    assert leases.holder("t1").pid == pid
    assert leases.acquire("t1", "resumer-1", ttl_s=30) is True
    assert leases.holder("t1").owner == "resumer-1"


def test_eight_processes_racing_for_one_lease_one_wins(open_leases):
    open_leases()  # the table exists before the race
    gun_r, gun_w = os.pipe()
    out_r, out_w = os.pipe()
    done_r, done_w = os.pipe()

    def racer(index: int):
        def body() -> int:
            os.close(gun_w)
            os.close(done_w)
            mine = open_leases()
            mine.holder("race")  # connect before the gun
            os.read(gun_r, 1)
            won = mine.acquire("race", f"racer-{index}", ttl_s=30)
            os.write(out_w, b"W" if won else b"L")
            os.read(done_r, 1)  # stay alive (a dead winner's lease may be taken over)
            return 0
        return body

    pids = [in_child(racer(i)) for i in range(8)]
    os.close(gun_w)  # every racer wakes at once
    answers = b""
    try:
        while len(answers) < 8:
            readable, _, _ = select.select([out_r], [], [], 30)
            assert readable, f"only {len(answers)} of 8 racers answered within 30 s"
            answers += os.read(out_r, 8)
    finally:
        os.close(done_w)
        statuses = [os.waitpid(pid, 0)[1] for pid in pids]
    assert all(os.WIFEXITED(s) and os.WEXITSTATUS(s) == 0 for s in statuses)
    assert sorted(answers.decode()) == ["L"] * 7 + ["W"]


def test_every_new_holder_gets_a_larger_fencing_token(leases):
    assert leases.acquire("t1", "resumer-1", ttl_s=30)
    first = leases.holder("t1").fence
    assert leases.acquire("t1", "resumer-1", ttl_s=60)  # a renewal keeps its token
    assert leases.holder("t1").fence == first
    leases.release("t1", "resumer-1")
    with leases.hold("t1", "resumer-2", ttl_s=30) as lease:  # a release does not reset it
        assert lease.fence > first and lease.owner == "resumer-2"
    assert leases.acquire("t2", "resumer-1", ttl_s=30)
    assert leases.holder("t2").fence >= 1  # every thread counts on its own


def test_a_superseded_holder_is_told_its_lease_is_lost(leases):
    assert leases.acquire("t1", "resumer-1", ttl_s=0.05)
    old = leases.holder("t1").fence
    leases.check("t1", "resumer-1", old)  # still its own: no error
    time.sleep(0.15)
    with pytest.raises(LeaseLost, match="'resumer-1' lost its lease on thread 't1'"):
        leases.check("t1", "resumer-1", old)  # ran out, even before anyone took it
    assert leases.acquire("t1", "resumer-2", ttl_s=30)
    with pytest.raises(LeaseLost, match="'resumer-2' holds it now") as lost:
        leases.check("t1", "resumer-1", old)
    assert lost.value.current.fence > old
    assert leases.acquire("t1", "resumer-1", ttl_s=30) is False  # and cannot renew it


def test_a_frozen_holder_wakes_up_superseded(open_leases):
    """SIGSTOP a real holder past its time; another takes the thread; the holder, woken, is
    refused by its token."""
    leases = open_leases()
    out_r, out_w = os.pipe()

    def holder() -> int:
        mine = open_leases()
        assert mine.acquire("t1", "worker-1", ttl_s=0.1)
        token = mine.holder("t1").fence
        os.kill(os.getpid(), signal.SIGSTOP)  # frozen here, lease running out
        try:
            mine.check("t1", "worker-1", token)
            os.write(out_w, b"still mine")
        except LeaseLost as lost:
            os.write(out_w, str(lost).encode())
        return 0

    pid = in_child(holder)
    os.close(out_w)
    _, status = os.waitpid(pid, os.WUNTRACED)
    assert os.WIFSTOPPED(status), "the holder should have frozen itself"
    while leases.holder("t1").expires_at > leases.now():
        time.sleep(0.02)
    assert leases.acquire("t1", "resumer-1", ttl_s=30) is True  # alive but frozen: time decides
    os.kill(pid, signal.SIGCONT)
    answer = os.read(out_r, 1000).decode()
    assert os.WEXITSTATUS(os.waitpid(pid, 0)[1]) == 0
    assert "'worker-1' lost its lease" in answer and "'resumer-1' holds it now" in answer


def test_hold_releases_even_when_the_block_fails(leases):
    with pytest.raises(RuntimeError, match="boom"), leases.hold("t1", "resumer-1", ttl_s=30):
        assert leases.holder("t1").owner == "resumer-1"
        raise RuntimeError("boom")
    assert leases.holder("t1") is None


@pytest.mark.parametrize("ttl", [0, -1, float("nan"), float("inf"), "30", True, None])
def test_a_bad_ttl_is_refused_with_a_reason(leases, ttl):
    with pytest.raises(ValueError, match="ttl_s must be a positive number of seconds"):
        leases.acquire("t1", "resumer-1", ttl_s=ttl)
    assert leases.holder("t1") is None


def test_empty_names_are_refused(leases):
    with pytest.raises(ValueError, match="thread_id must be a non-empty string"):
        leases.acquire("", "resumer-1", ttl_s=30)
    with pytest.raises(ValueError, match="owner must be a non-empty string"):
        leases.acquire("t1", "", ttl_s=30)


# ---------------------------------------------------------------- liveness (backend-free)
def test_process_liveness_sees_dead_zombie_and_reused_pids():
    me = os.getpid()
    assert process_alive(me, process_start(me))
    if not os.path.exists("/proc/self/stat"):
        pytest.skip("start times and zombies are read from /proc (Linux)")
    assert not process_alive(me, "12345")  # same pid, another start time: a reused pid
    pid = in_child(lambda: time.sleep(30) or 0)
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 5
    while process_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not process_alive(pid)  # a zombie (not reaped yet) is not alive
    os.waitpid(pid, 0)
    assert not process_alive(pid)
