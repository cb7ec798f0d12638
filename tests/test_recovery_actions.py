"""The recovery triad carried out on CloudWave threads: resume, branch, abandon, for real."""

from __future__ import annotations

import sqlite3

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver

from course.cloudwave import agent_graph, first_message, keyed_graph, scripted_calls
from course.crash import damage, kill_in_flight
from course.crash.harness import CrashAwareSaver
from course.durable import (
    NeedsReconcile,
    Recovery,
    ReplayLog,
    abandon,
    branch,
    checkpoint_before,
    decide,
    history,
    in_flight,
    resume,
)
from course.world import World

THREAD = "incident-1"
CONFIG = {"configurable": {"thread_id": THREAD}}


def test_a_kill_between_the_charge_and_its_record_resumes_to_one_charge(tmp_path):
    path = kill_in_flight(tmp_path, THREAD)  # raises unless the SIGKILL landed mid-charge
    world = World(tmp_path)
    graph = keyed_graph(world, CrashAwareSaver(path))
    with pytest.raises(NeedsReconcile):  # a blind resume is refused, not re-fired
        graph.invoke(None, CONFIG, durability="sync")
    assert len(world.billing.charges()) == 1
    decision = decide(NeedsReconcile("charge", "k", THREAD), checkpoints=path, thread_id=THREAD)
    assert decision.recovery is Recovery.RESUME
    final = resume(graph, CONFIG, store=world.records, lookup=world.find_listed)
    assert final["charge"]["id"] == world.billing.charges()[0]["id"]
    assert world.ledger().count("charges") == 1 and world.ledger().count("emails") == 1
    assert in_flight(world.records, THREAD) == []
    world.close()


def test_branching_leaves_the_original_history_as_it_was(tmp_path):
    world = World(tmp_path)
    graph = keyed_graph(world, SqliteSaver(sqlite3.connect(tmp_path / "cp.db",
                                                           check_same_thread=False)))
    graph.invoke({"thread_id": THREAD, "message": "Ada (ada@example.com): pay inv_9"}, CONFIG,
                 durability="sync")
    before = history(graph, CONFIG)
    fork = branch(graph, checkpoint_before(graph, CONFIG, "email"),
                  {"customer_email": "ada.lovelace@example.com"})
    graph.invoke(None, fork, durability="sync")
    after = history(graph, CONFIG)
    assert after[len(after) - len(before):] == before  # every old checkpoint, unchanged
    assert len(after) > len(before)
    assert graph.get_state(CONFIG).values["email"]["to"] == "ada@example.com"  # vendor replay
    assert world.ledger().count("charges") == 1  # the fork started after the charge
    world.close()


def test_checkpoint_before_searches_the_current_branch_only(tmp_path):
    world = World(tmp_path)
    graph = keyed_graph(world, InMemorySaver())
    graph.invoke({"thread_id": THREAD, "message": "Ada (ada@example.com): pay inv_9"}, CONFIG,
                 durability="sync")
    old_email = checkpoint_before(graph, CONFIG, "email")
    fork = branch(graph, checkpoint_before(graph, CONFIG, "charge"), {})  # not continued
    assert checkpoint_before(graph, CONFIG, "charge") == fork  # the fork is the branch's head
    with pytest.raises(ValueError, match="just before 'email'"):  # only the old branch has one
        checkpoint_before(graph, CONFIG, "email")
    assert checkpoint_before(graph, old_email, "email") == old_email  # asked from the old branch
    world.close()


def test_a_step_budget_spent_is_abandoned_with_the_customer_told(tmp_path):
    world = World(tmp_path)
    saver = InMemorySaver()
    log = ReplayLog(tmp_path / "replay.jsonl")
    looping = scripted_calls(*[("lookup_invoice", {"invoice_id": "inv_9"})] * 20, version="v1")
    graph = agent_graph(world, saver, model=looping, log=log)
    with pytest.raises(Exception) as caught:
        graph.invoke(first_message(THREAD, "pay inv_9"), {**CONFIG, "recursion_limit": 6})
    decision = decide(caught.value)
    assert decision.recovery is Recovery.ABANDON and "budget" in decision.reason
    told: list[str] = []
    done = abandon(THREAD, checkpointer=saver, store=world.records, lookup=world.find_listed,
                   tell_customer=told.append, reason="it took too many steps")
    assert done.checkpoints == "deleted" and told == [done.message]
    assert saver.get_tuple(CONFIG) is None  # the thread is gone
    assert len(log) >= 2  # the replay log is evidence: delete_thread leaves it
    world.close()


def test_a_corrupt_checkpoint_file_is_abandoned_and_the_landed_charge_kept(tmp_path):
    path = kill_in_flight(tmp_path, THREAD)
    damage(path)
    decision = decide(None, checkpoints=path, thread_id=THREAD)
    assert decision.recovery is Recovery.ABANDON and "truncated" in decision.reason
    world = World(tmp_path)
    told: list[str] = []
    done = abandon(THREAD, corrupt_file=path, store=world.records, lookup=world.find_listed,
                   tell_customer=told.append, reason="its saved state is damaged")
    assert done.settled == {"charge": "landed"}
    assert not path.exists() and done.checkpoints.startswith("quarantined to ")
    assert "charge" in told[0]
    assert world.records.get(f"{THREAD}:charge").status == "done"
    world.close()


def test_abandon_needs_one_place_to_drop_the_thread(tmp_path):
    with pytest.raises(ValueError, match="exactly one"):
        abandon(THREAD, tell_customer=print, reason="x")
