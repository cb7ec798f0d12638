"""Replay records: the agent writes one per step, the log survives kills, model changes are
found, recorded inputs replay through fixed tools, and the stepper shows the same data."""

from __future__ import annotations

import os
import signal

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from course.classroom import ReplayStepper
from course.cloudwave import (
    INCIDENT_MESSAGE,
    agent_graph,
    first_message,
    incident_models,
    run_config,
    support_tools,
)
from course.durable import (
    ReplayLog,
    ReplayRecord,
    model_changed_at,
    model_changes,
    replay_table,
    replay_tools,
    transcript_hash,
)
from course.world import World
from course.world.billing import RateLimited


def _incident(tmp_path):
    """The course's incident: a 429, a deploy, a resume on the newer model, keyless tools."""
    world, saver = World(tmp_path / "world"), InMemorySaver()
    log = ReplayLog(tmp_path / "replay.jsonl")
    old, new = incident_models()

    def keyless(w, thread_id):
        return support_tools(w, thread_id, keyed=False)

    world.billing.inject("rate_limit")
    with pytest.raises(RateLimited):
        agent_graph(world, saver, model=old, log=log, tools=keyless).invoke(
            first_message("t-1", INCIDENT_MESSAGE), run_config("t-1", old), durability="sync")
    graph = agent_graph(world, saver, model=new, log=log, tools=keyless)
    graph.invoke(None, run_config("t-1", new), durability="sync")
    return world, log, graph


def test_the_incident_is_recorded_step_by_step_and_the_change_is_found(tmp_path):
    world, log, graph = _incident(tmp_path)
    records = log.records()
    assert [(r.step, r.model_version) for r in records] == [
        (1, "2025-05-01"), (2, "2025-05-01"), (3, "2025-06-01"), (4, "2025-06-01"),
        (5, "2025-06-01")]
    assert model_changed_at(records) == 3
    assert model_changes(records)[0].before == "cloudwave-support 2025-05-01"
    assert world.ledger().count("charges") == 2  # the incident really double-charged
    versions = {s.metadata.get("model_version")
                for s in graph.get_state_history({"configurable": {"thread_id": "t-1"}})}
    assert versions == {"2025-05-01", "2025-06-01"}  # config metadata reached the checkpoints
    assert len(replay_table(records)) == 5
    world.close()


def test_transcript_hash_ignores_ids_and_sees_every_message():
    a = [HumanMessage("pay inv_9", id="1"), AIMessage("ok", id="2")]
    b = [HumanMessage("pay inv_9", id="x"), AIMessage("ok", id="y")]
    assert transcript_hash(a) == transcript_hash(b)
    assert transcript_hash(a) != transcript_hash(a[:1])
    assert transcript_hash(a) != transcript_hash([HumanMessage("pay inv_12"), a[1]])


def test_the_fix_replays_the_incident_to_one_charge(tmp_path):
    _, log, _ = _incident(tmp_path)
    scratch = World(tmp_path / "scratch")
    rows = replay_tools(log, support_tools(scratch, "t-1", keyed=True))
    assert [r["tool"] for r in rows] == ["lookup_invoice", "charge", "charge", "send_receipt"]
    assert rows[2]["replayed"]["replayed"] is True
    assert scratch.ledger().count("charges") == 1
    with pytest.raises(KeyError, match="which the replay was not given"):
        replay_tools(log, {})
    scratch.close()


def test_the_keyed_tools_pay_and_mail_each_invoice_of_a_conversation_once(tmp_path):
    world = World(tmp_path / "w")
    tools = support_tools(world, "t-1", keyed=True)
    for invoice_id in ("inv_9", "inv_10", "inv_9", "inv_10"):  # two invoices, each twice
        tools["charge"](invoice_id=invoice_id)
        tools["send_receipt"](invoice_id=invoice_id)
    ledger = world.ledger()
    assert [ledger.count(what, i) for what in ("charges", "emails")
            for i in ("inv_9", "inv_10")] == [1, 1, 1, 1]
    world.close()


def test_the_log_skips_a_line_cut_by_a_kill_and_rejects_incomplete_records(tmp_path):
    log = ReplayLog(tmp_path / "r.jsonl")
    pid = os.fork()
    if pid == 0:
        log.append(ReplayRecord(1, "tools", "m", "v1", "h" * 64))
        with open(log.path, "a") as f:
            f.write('{"step": 2, "node": "to')  # the kill lands mid-line
            f.flush()
        os.kill(os.getpid(), signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
    assert [r.step for r in log.records()] == [1]
    with pytest.raises(ValueError, match="needs model_version"):
        ReplayRecord(1, "tools", "m", "", "h")


def test_the_stepper_shows_the_same_data_as_the_table(tmp_path):
    _, log, _ = _incident(tmp_path)
    stepper = ReplayStepper(log)
    assert stepper.table.rows == replay_table(log).rows
    assert stepper.go(2).step == 3 and "MODEL CHANGED here" in stepper.describe()
    stepper.forward.click()
    assert stepper.position == 3 and "MODEL CHANGED" not in stepper.view.value
    stepper.go(99)
    assert stepper.position == len(log) - 1
    with pytest.raises(ValueError, match="nothing to replay"):
        ReplayStepper([])
