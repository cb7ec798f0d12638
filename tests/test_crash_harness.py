"""Real SIGKILLs in forked workers, resume in new processes, and what the ledger says."""

from __future__ import annotations

import sqlite3
import subprocess
import sys

import pytest
from langgraph.checkpoint.sqlite import SqliteSaver

from course.cloudwave.nodes import keyed_graph
from course.crash import CrashHarness, final_state
from course.crash.harness import resolve_factory


def test_naive_graph_killed_after_charge_charges_twice():
    result = CrashHarness("naive").run("charge", "after_effect")
    assert result.attempts[0].outcome == "killed"
    assert result.attempts[0].detail == "SIGKILL"
    assert result.killed_at == ("charge", "after_effect") and result.killed_as_armed
    assert result.status == "completed"
    assert result.charges == 2
    assert result.double_charge and not result.lost
    assert result.doubles == [{"invoice_id": "inv_9", "what": "charges", "count": 2}]
    # The resumed worker re-ran charge from its first line, but not parse or retrieve.
    resumed = [node for node, point in result.attempts[1].reached if point == "before_effect"]
    assert resumed == ["charge", "email"]


def test_keyed_graph_killed_after_charge_charges_once():
    result = CrashHarness("keyed").run("charge", "after_effect")
    assert result.killed_at == ("charge", "after_effect")
    assert (result.charges, result.emails) == (1, 1)
    assert not result.double_charge and not result.lost
    assert result.doubles == []


def test_killed_after_the_checkpoint_the_node_does_not_run_again():
    result = CrashHarness("naive").run("charge", "after_checkpoint")
    assert result.killed_at == ("charge", "after_checkpoint")
    resumed = [node for node, point in result.attempts[1].reached if point == "before_effect"]
    assert resumed == ["email"]
    assert result.charges == 1


def test_killed_between_put_writes_and_put_the_node_does_not_run_again():
    """LangGraph saved the node's write record; the step checkpoint never came."""
    harness = CrashHarness("naive", max_attempts=1)  # only the killed worker
    killed = harness.run("charge", "after_writes")
    assert killed.kill_landed and killed.attempts[0].reached[-1] == ("charge", "after_writes")
    saver = SqliteSaver(sqlite3.connect(killed.run_dir / "checkpoints.db"))
    saved = saver.get_tuple({"configurable": {"thread_id": killed.thread_id}})
    # the latest checkpoint still has charge to do, and holds charge's writes
    assert saved.checkpoint["channel_values"].get("charge") is None
    assert any(channel == "charge" for _, channel, _ in saved.pending_writes)

    result = CrashHarness("naive").run("charge", "after_writes")
    resumed = [node for node, point in result.attempts[1].reached if point == "before_effect"]
    assert resumed == ["email"]
    assert (result.charges, result.emails) == (1, 1)


def test_keyed_lost_200_is_answered_by_the_provider_not_the_guard():
    """Killed after the bank committed, before the guard recorded: the guard must reconcile."""
    result = CrashHarness("keyed").run("charge", "before_record")
    assert result.kill_landed and result.attempts[0].reached[-1] == ("charge", "before_record")
    assert [a.outcome for a in result.attempts] == ["killed", "needs_reconcile", "completed"]
    assert (result.charges, result.emails, result.reconciled) == (1, 1, 1)


def test_naive_email_killed_after_sending_sends_twice():
    result = CrashHarness("naive").run("email", "after_effect")
    assert result.killed_at == ("email", "after_effect")
    assert (result.charges, result.emails) == (1, 2)
    assert result.verdict == "double email"


def test_a_timer_kill_anywhere_is_followed_by_resume_to_completion():
    harness = CrashHarness("keyed")
    # Timers set well inside an unarmed run's length. The machine's pace drifts (other
    # tests run beside this one), so a timer that fired after its worker finished is
    # tried again, against a fresh measure of the run, up to three times.
    for fraction in (0.0, 0.1, 0.25, 0.5):
        for _ in range(3):
            whole = min(harness.run().attempts[0].elapsed_s for _ in range(2))
            result = harness.run(kill_after_s=fraction * whole)
            if result.kill_landed:
                break
        assert result.kill_landed, f"the timer at {fraction:.0%} of a run did not kill"
        assert result.attempts[0].detail == "SIGKILL" and result.killed_at is not None
        assert result.status == "completed"
        assert (result.charges, result.emails) == (1, 1)


def test_an_unknown_node_is_refused_naming_the_real_ones():
    with pytest.raises(ValueError, match="no node 'send_receipt'") as caught:
        CrashHarness("keyed").run("send_receipt", "after_effect")
    assert "parse, retrieve, charge, email" in str(caught.value)
    assert "\n" not in str(caught.value)


def test_a_crash_point_the_run_never_reaches_is_not_a_pass():
    from course.cloudwave.nodes import support_graph

    result = CrashHarness(support_graph).run("refund", "after_effect")  # the message pays
    assert result.killed_at is None and not result.killed_as_armed
    assert result.verdict.startswith("NOT KILLED at refund/after_effect")


def test_bad_arguments_are_explained():
    with pytest.raises(ValueError, match="unknown crash point"):
        CrashHarness("keyed").run("charge", "during_lunch")
    with pytest.raises(ValueError, match="unknown graph"):
        resolve_factory("fancy")
    assert resolve_factory("course.cloudwave.nodes:keyed_graph") is keyed_graph


def test_a_worker_error_is_reported_not_hidden():
    def broken(world, checkpointer):
        raise RuntimeError("my graph does not build")

    result = CrashHarness(broken).run()
    assert result.status == "error"
    assert "my graph does not build" in result.attempts[-1].detail
    assert result.verdict.startswith("error")


@pytest.mark.parametrize(("graph", "last_line"), [
    ("naive", "scenarios=16 double_charges=1 lost=0"),  # 4 nodes x 4 points
    ("keyed", "scenarios=17 double_charges=0 lost=0"),  # + charge/before_record (the guard)
])
def test_matrix_command(graph, last_line):
    done = subprocess.run([sys.executable, "-m", "course.crash", "matrix", "--graph", graph,
                           "--no-progress"], capture_output=True, text=True, check=True)
    lines = done.stdout.strip().splitlines()
    assert lines[-1] == last_line
    assert "NOT KILLED" not in done.stdout  # every scenario died where it was armed
    assert any("charge" in line and "after_effect" in line for line in lines)
    assert any("charge" in line and "after_writes" in line for line in lines)
    assert any("charge" in line and "before_record" in line for line in lines) == (
        graph == "keyed")


def test_final_state_tells_the_guards_record_from_the_providers_key_check():
    harness = CrashHarness("keyed")
    recorded = harness.run("charge", "after_effect")  # the guard had recorded the result
    asked = harness.run("charge", "before_record")  # it had not: the provider answered
    assert final_state(harness, recorded)["charge"]["replayed"] is False
    assert final_state(harness, asked)["charge"]["replayed"] is True
    assert final_state(harness, asked)["log"] == ["parse", "retrieve", "charge", "email"]


def test_the_fuzzers_windows_name_the_new_points():
    """A kill's zone in the fuzz table is the last point its worker reached."""
    from course.crash.fuzz import Outcome

    harness = CrashHarness("keyed")
    for node, point in (("charge", "before_record"), ("charge", "after_writes")):
        outcome = Outcome.of(0, None, harness.run(node, point))
        assert outcome.landed and outcome.zone == f"{node}/{point}"


def receipt_only(world, checkpointer):
    """A graph whose mail node has another name: the matrix cannot kill it at ``email``."""
    from course.cloudwave.graph import build_graph
    from course.cloudwave.nodes import KEYED_NODES

    nodes = {("send_receipt" if name == "email" else name): fn
             for name, fn in KEYED_NODES.items()}
    return build_graph(nodes, world=world, checkpointer=checkpointer)


def test_the_matrix_refuses_a_graph_without_the_nodes_in_one_line(capsys, tmp_path):
    from course.crash.__main__ import main

    assert main(["matrix", "--graph", "test_crash_harness:receipt_only", "--no-progress",
                 "--keep", str(tmp_path)]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        "python -m course.crash matrix: the test_crash_harness:receipt_only graph has no "
        "node 'email'; choose one of parse, retrieve, charge, send_receipt"]
