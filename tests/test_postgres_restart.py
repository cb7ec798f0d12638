"""The container restart on a real PostgreSQL: kill the worker, halt the server, start it,
resume the same thread."""

from __future__ import annotations

import pytest

from course.crash import restart_drill

pytestmark = pytest.mark.postgres


def test_restart_between_kill_and_resume_leaves_exactly_one_charge(postgres, tmp_path):
    drill = restart_drill(postgres, tmp_path, graph="keyed")
    assert drill.worker == "SIGKILL"
    assert postgres.running()
    assert (drill.charges, drill.emails) == (1, 1)
    assert drill.log[-1] == "email"  # the resumed run finished


def test_the_same_drill_catches_a_graph_without_keys(postgres, tmp_path):
    drill = restart_drill(postgres, tmp_path, graph="naive")
    assert drill.charges == 2  # checkpoints survived the restart; the charge was not keyed


def test_data_committed_before_a_halt_is_there_after_it(postgres):
    import psycopg

    uri = postgres.new_database()
    with psycopg.connect(uri, autocommit=True) as conn:
        conn.execute("CREATE TABLE t (x int)")
        conn.execute("INSERT INTO t VALUES (7)")
    postgres.halt("immediate")
    assert not postgres.running()
    postgres.resume_server()
    with psycopg.connect(uri) as conn:
        assert conn.execute("SELECT x FROM t").fetchall() == [(7,)]
    with pytest.raises(ValueError, match="unknown shutdown mode"):
        postgres.halt("gently")
