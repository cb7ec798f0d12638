"""Eight processes resume the same crashed thread at the same moment, on SQLite and Postgres.

Exactly one resumes (taking over the lease the SIGKILLed first run left behind),
the customer is charged once and mailed once, and the seven others report, in
words, that the thread is in progress elsewhere: none of them crashes.
Also here: PostgresSaver on a real PostgreSQL survives a SIGKILL like SqliteSaver.
"""

from __future__ import annotations

import sqlite3
import time

import pytest

from course.cloudwave.nodes import keyed_graph
from course.crash.concurrent import resume_race
from course.durable.lease import process_alive

STORES = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


@pytest.fixture
def conninfo(request):
    """The database for a race: a fresh Postgres one, or None for the SQLite store."""
    if request.node.callspec.params.get("store") == "postgres":
        return request.getfixturevalue("postgres_uri")
    return None


def final_state(store, result, conninfo):
    """The thread's last checkpoint, read back through a fresh saver of the same store."""
    if store == "sqlite":
        from langgraph.checkpoint.sqlite import SqliteSaver

        saver = SqliteSaver(sqlite3.connect(result.run_dir / "checkpoints.db"))
        return keyed_graph(None, saver).get_state({"configurable":
                                                    {"thread_id": result.thread_id}})
    from langgraph.checkpoint.postgres import PostgresSaver

    with PostgresSaver.from_conn_string(conninfo) as saver:
        return keyed_graph(None, saver).get_state({"configurable":
                                                    {"thread_id": result.thread_id}})


@pytest.mark.parametrize("store", STORES)
def test_eight_resumers_one_charge_one_email_seven_told_to_wait(store, conninfo, tmp_path):
    result = resume_race(store, resumers=8, conninfo=conninfo, root=tmp_path)

    # The first run died for real, holding a lease that had not run out.
    assert result.crashed == "killed"
    stale = result.stale_lease
    assert stale.owner == "first-run" and not process_alive(stale.pid, stale.started)
    assert stale.expires_at > time.time() + 60  # so it was taken over because its holder died

    # One winner, seven clear refusals, no crash.
    assert result.counts() == {"resumed": 1, "in_progress_elsewhere": 7}, str(result)
    winner = result.winners[0]
    for loser in result.with_outcome("in_progress_elsewhere"):
        assert loser.holder == f"resumer-{winner.index}"
        assert result.thread_id in loser.detail
        assert "in progress elsewhere" in loser.detail
        assert f"'resumer-{winner.index}'" in loser.detail  # who has it
        assert f"'resumer-{loser.index}'" in loser.detail  # who was turned away
    assert (result.charges, result.emails) == (1, 1)
    assert result.ok

    # The thread is finished in its checkpoints: parse, retrieve, charge, email, in order.
    state = final_state(store, result, conninfo)
    assert state.next == ()
    assert state.values["log"] == ["parse", "retrieve", "charge", "email"]
    assert state.values["charge"]["invoice_id"] == "inv_9"


def test_without_the_lease_every_resumer_redoes_the_work_and_only_keys_save_the_money(tmp_path):
    result = resume_race("sqlite", resumers=8, lease=False, root=tmp_path)
    assert result.crashed == "killed"
    assert len(result.resumers) == 8
    for resumer in result.resumers:  # each one ran the graph to the end, or found it finished
        assert resumer.outcome in ("resumed", "nothing_to_do"), (resumer.outcome, resumer.detail)
    assert len(result.winners) >= 2, str(result)  # several did the work at the same time
    assert (result.charges, result.emails) == (1, 1)  # the guard and the provider's keys


@pytest.mark.postgres
@pytest.mark.parametrize(("graph", "point", "charges"), [
    ("naive", "after_effect", 2),  # the checkpoint does not save a naive charge...
    ("keyed", "after_effect", 1),  # ...keys and the guard do
    ("naive", "after_checkpoint", 1),  # a node the checkpoint recorded never re-runs
])
def test_postgres_saver_survives_a_sigkill_like_sqlite(graph, point, charges, postgres_uri,
                                                      tmp_path):
    result = resume_race("postgres", resumers=1, factory=graph, point=point,
                         conninfo=postgres_uri, root=tmp_path)
    assert result.crashed == "killed"
    assert result.counts() == {"resumed": 1}
    assert (result.charges, result.emails) == (charges, 1)


def test_bad_race_arguments_are_explained():
    with pytest.raises(ValueError, match="unknown store"):
        resume_race("mongodb")
    with pytest.raises(ValueError, match="needs conninfo"):
        resume_race("postgres")
    with pytest.raises(ValueError, match="unknown crash point"):
        resume_race("sqlite", point="during_lunch")
    with pytest.raises(ValueError, match="resumers must be"):
        resume_race("sqlite", resumers=0)


def test_a_crash_point_that_is_never_reached_is_reported(tmp_path):
    with pytest.raises(RuntimeError, match="was meant to die at refund/after_effect"):
        resume_race("sqlite", node="refund", root=tmp_path)
