"""The machinery of weeks 3 and 4: checkpoint rows, the routed refund flow, the approval step,
the durability wrapper, pause-kill-resume across processes, and the two widgets."""

from __future__ import annotations

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from course.classroom import ApprovalPanel, HistoryBrowser
from course.cloudwave import (
    APPROVAL_THRESHOLD_CENTS,
    REFUND_MESSAGE,
    approval_graph,
    approval_notice,
    build_support_graph,
    history_rows,
    history_table,
    notices_sent,
    read_decision,
    support_nodes,
)
from course.cloudwave.refund_flow import refund_cents
from course.crash import CrashHarness, pause_then_resume, with_durability
from course.grading import count_runs

LARGE = {"thread_id": "t-big", "message": "Please refund invoice inv_11."}


def config(thread_id):
    return {"configurable": {"thread_id": thread_id}}


def finished_refund(world, thread_id="t1"):
    graph = build_support_graph(support_nodes(), world=world, checkpointer=InMemorySaver())
    graph.invoke({"thread_id": thread_id, "message": REFUND_MESSAGE}, config(thread_id))
    return graph


# ------------------------------------------------------------ refund flow, history
def test_the_refund_amount_comes_from_the_state_then_the_message_then_the_invoice():
    assert refund_cents({"refund_cents": 1500, "message": "refund 40.00", "cents": 9}) == 1500
    assert refund_cents({"message": "please refund 40.00 of inv_11", "cents": 12900}) == 4000
    assert refund_cents({"message": "please refund inv_11", "cents": 12900}) == 12900


def test_support_nodes_refuse_an_unknown_swap():
    with pytest.raises(ValueError, match="no node \\['refnud'\\]"):
        support_nodes(refnud=lambda state, world: {})


def test_history_rows_say_what_each_checkpoint_saved_and_what_runs_next(world):
    graph = finished_refund(world)
    rows = history_rows(graph, config("t1"))
    assert [(r["step"], r["source"], r["after"], r["next"]) for r in rows] == [
        (4, "loop", "email", "(end)"), (3, "loop", "refund", "email"),
        (2, "loop", "retrieve", "refund"), (1, "loop", "parse", "retrieve"),
        (0, "loop", "START", "parse"), (-1, "input", "(input)", "START")]
    assert [r["parent_id"] for r in rows[:-1]] == [r["checkpoint_id"] for r in rows[1:]]
    assert rows[1]["values"]["refund"]["cents"] == 4000 and "refund" not in rows[2]["values"]
    assert len(history_table(graph, config("t1"))) == 6


def test_a_fork_shows_up_as_an_update_with_the_old_checkpoint_as_parent(world):
    graph = finished_refund(world)
    before = next(r for r in history_rows(graph, config("t1")) if r["next"] == "refund")
    graph.update_state(before["config"], {"refund_cents": 100})
    newest = history_rows(graph, config("t1"))[0]
    assert (newest["source"], newest["after"], newest["parent_id"]) == (
        "update", "(update_state)", before["checkpoint_id"])


def test_history_needs_a_thread_id(world):
    with pytest.raises(ValueError, match="thread id"):
        history_rows(finished_refund(world), {"configurable": {}})


def test_the_history_browser_walks_the_same_rows_oldest_first(world):
    graph = finished_refund(world)
    browser = HistoryBrowser(graph, config("t1"))
    assert browser.selected["next"] == "(end)"
    assert browser.select(0)["source"] == "input"
    assert "step -1" in browser.detail.value
    assert [r["step"] for r in browser.table()] == [-1, 0, 1, 2, 3, 4]
    with pytest.raises(ValueError, match="from 0 to 5"):
        browser.select(6)
    with pytest.raises(ValueError, match="no checkpoints yet"):
        HistoryBrowser(graph, config("nobody"))


def test_count_runs_counts_every_start_even_a_failing_one(world):
    nodes, runs = count_runs(support_nodes())
    graph = build_support_graph(nodes, world=world, checkpointer=InMemorySaver())
    world.billing.inject("timeout")
    with pytest.raises(Exception, match="did not answer"):
        graph.invoke({"thread_id": "t", "message": REFUND_MESSAGE}, config("t"))
    graph.invoke(None, config("t"))
    assert dict(runs) == {"parse": 1, "retrieve": 1, "refund": 2, "email": 1}


# ---------------------------------------------------------------- approval step
def test_read_decision_normalises_answers_and_explains_bad_ones():
    assert read_decision({"approved": True}) == {"approved": True, "reason": "", "by": "person"}
    assert read_decision({"approved": False, "reason": " dup "})["reason"] == "dup"
    for bad, said in [("yes", "resume with"), ({"approved": "yes"}, "resume with"),
                      ({"approved": False}, "needs a reason"),
                      ({"approved": True, "reason": 3}, "must be text")]:
        with pytest.raises(ValueError, match=said):
            read_decision(bad)


def test_small_refunds_pass_large_ones_wait_and_a_rejection_ends_the_run(world):
    graph = approval_graph(world, InMemorySaver(), partner=True)
    small = graph.invoke({"thread_id": "s", "message": "refund inv_9"}, config("s"))
    assert small["decision"]["by"] == "policy" and small["refund"]["cents"] == 2900
    paused = graph.invoke(LARGE, config("t-big"))
    asked = paused["__interrupt__"][0].value
    assert asked["cents"] == 12900 > APPROVAL_THRESHOLD_CENTS
    assert asked["partner_webhook"]["payload"]["invoice_id"] == "inv_11"
    delivered = lambda: [d["payload"]["invoice_id"] for d in world.webhook.deliveries()]  # noqa: E731
    assert len(world.billing.refunds()) == 1 and delivered() == ["inv_9"]  # the small one only
    done = graph.invoke(Command(resume={"approved": False, "reason": "fraud"}), config("t-big"))
    assert done["decision"] == {"approved": False, "reason": "fraud", "by": "person"}
    assert len(world.billing.refunds()) == 1 and delivered() == ["inv_9"]


def test_the_request_names_the_partner_webhook_only_when_the_graph_posts_it(world):
    asked = {}
    for partner in (False, True):
        graph = approval_graph(world, InMemorySaver(), partner=partner)
        thread = f"t-partner-{partner}"
        paused = graph.invoke({**LARGE, "thread_id": thread}, config(thread))
        asked[partner] = paused["__interrupt__"][0].value
    assert "partner_webhook" not in asked[False]
    assert not any("webhook" in line for line in asked[False]["will_send"])
    assert asked[True]["partner_webhook"]["event"] == "refund.issued"
    assert asked[True]["will_send"][-1] == "partner webhook refund.issued for inv_11"
    assert world.webhook.deliveries() == []


def test_an_approval_posts_the_named_webhook_once(world):
    graph = approval_graph(world, InMemorySaver(), partner=True)
    graph.invoke(LARGE, config("t-big"))
    graph.invoke(Command(resume={"approved": True}), config("t-big"))
    assert [d["payload"]["cents"] for d in world.webhook.deliveries()] == [12900]


def test_approval_notices_are_counted_for_the_desk_only(world):
    state = {"thread_id": "t", "invoice_id": "inv_11", "cents": 12900, "currency": "eur"}
    world.mail.send(**approval_notice(state))
    world.mail.send(to="marta@example.com", template="x", subject="s", body="b")
    assert notices_sent(world) == 1


def test_approval_graph_refuses_clashing_node_names(world):
    with pytest.raises(ValueError, match="reuses node names \\['refund'\\]"):
        approval_graph(world, before_approval={"refund": lambda s, w: {}})


def test_the_approval_panel_resumes_and_keeps_every_decision(world):
    graph = approval_graph(world, InMemorySaver())
    graph.invoke(LARGE, config("t-big"))
    panel = ApprovalPanel(graph, config("t-big"))
    assert "Refund 129.00 EUR" in panel.question.value and not panel.approve_button.disabled
    panel._press(False)  # the Reject button with an empty reason: refused, nothing resumed
    assert "needs a reason" in panel.status.value and panel.decisions == [] and panel.waiting
    panel.reason.value = "checked"
    panel._press(True)
    assert panel.decisions == [{"approved": True, "reason": "checked", "thread_id": "t-big"}]
    assert panel.result["refund"]["cents"] == 12900 and panel.approve_button.disabled
    with pytest.raises(ValueError, match="not waiting"):
        panel.reject("too late")


# ------------------------------------------------------------- crash machinery
def test_with_durability_refuses_an_unknown_mode():
    with pytest.raises(ValueError, match="choose one of sync, async, exit"):
        with_durability("naive", "fast")


def test_exit_mode_keeps_nothing_when_the_worker_is_killed(tmp_path):
    from course.cloudwave import naive_support_graph

    harness = CrashHarness(with_durability(naive_support_graph, "exit"), root=tmp_path,
                           message=REFUND_MESSAGE, invoice_id="inv_11")
    result = harness.run("refund", "before_effect")
    killed, after = result.attempts[0], result.attempts[1]
    assert killed.outcome == "killed" and killed.checkpoints_s == []
    assert (killed.checkpoints_left, killed.writes_left) == (0, ())  # read after the kill
    assert [n for n, p in after.reached if p == "before_effect"][:2] == ["parse", "retrieve"]
    sync = CrashHarness(with_durability(naive_support_graph, "sync"), root=tmp_path / "s",
                        message=REFUND_MESSAGE, invoice_id="inv_11").run("refund",
                                                                         "before_effect")
    assert sync.attempts[0].outcome == "killed" and len(sync.attempts[0].checkpoints_s) == 4
    assert (sync.attempts[0].checkpoints_left, sync.attempts[0].writes_left) == (4, ())
    assert [n for n, p in sync.attempts[1].reached if p == "before_effect"] == [
        "refund", "email"]


@pytest.mark.parametrize("mode", ["sync", "async", "exit"])
def test_no_step_checkpoint_waits_for_a_write_record_the_mode_never_saves(tmp_path, mode):
    """The harness's saver holds a step checkpoint until the node's write record is saved
    (langgraph issue 8039). "exit" saves none while the run goes on: a checkpoint waiting
    for one stalled every exit-mode worker until a timeout, traced as no_write_record."""
    from course.cloudwave import naive_support_graph

    result = CrashHarness(with_durability(naive_support_graph, mode), root=tmp_path,
                          message=REFUND_MESSAGE, invoice_id="inv_11").run("refund",
                                                                           "before_effect")
    assert [a.outcome for a in result.attempts] == ["killed", "completed"]
    stalled = [(a.number, n) for a in result.attempts for n, p in a.reached
               if p == "no_write_record"]
    assert stalled == []


def test_a_killed_worker_reports_the_write_records_it_left(tmp_path):
    """Read from the checkpoint file after the kill, before the next worker: a node whose
    write record is on disk (killed at after_writes) is not run again."""
    from course.cloudwave import naive_support_graph

    result = CrashHarness(naive_support_graph, root=tmp_path, message=REFUND_MESSAGE,
                          invoice_id="inv_11").run("retrieve", "after_writes")
    killed, after = result.attempts[0], result.attempts[1]
    assert result.killed_as_armed
    assert (killed.checkpoints_left, killed.writes_left) == (3, ("retrieve",))
    assert [n for n, p in after.reached if p == "before_effect"] == ["refund", "email"]


def test_pause_then_resume_kills_the_paused_process_and_answers_from_another(tmp_path):
    done = pause_then_resume(approval_graph, tmp_path / "a", thread_id="t-big",
                             first_input=LARGE, answer={"approved": True, "reason": "ok"})
    assert done.first_ended == "SIGKILL" and done.second_ended == "exit 0"
    assert done.first_pid != done.second_pid and done.killed_while_paused
    assert (done.refunds_while_paused, done.refunds) == (0, 1)
    assert done.final["decision"]["approved"] is True and done.still_waiting == []


def test_pause_then_resume_reports_a_wait_that_did_not_survive(tmp_path):
    lost = pause_then_resume(lambda world, saver: approval_graph(world, InMemorySaver()),
                             tmp_path / "b", thread_id="t-big", first_input=LARGE,
                             answer={"approved": True})
    assert lost.first_ended == "SIGKILL" and lost.second_ended == "exit 4"
    assert "no checkpoint for thread 't-big'" in lost.error and lost.refunds == 0
    never = pause_then_resume(approval_graph, tmp_path / "c", thread_id="t-small",
                              first_input={"thread_id": "t-small", "message": "refund inv_9"},
                              answer={"approved": True})
    assert never.first_ended == "exit 3" and not never.paused and never.second_ended == "not run"
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "leftover").write_text("x")
    with pytest.raises(ValueError, match="is not empty"):
        pause_then_resume(approval_graph, tmp_path / "d", thread_id="t", first_input=LARGE,
                          answer={"approved": True})
