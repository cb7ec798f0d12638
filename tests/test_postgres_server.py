"""The throwaway PostgreSQL (course.storage.postgres) and the session fixture built on it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.postgres
ROOT = Path(__file__).resolve().parent.parent


def postmaster_uid(server) -> int:
    pid = int((server.data / "postmaster.pid").read_text().split()[0])
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(line for line in status.splitlines() if line.startswith("Uid:")).split()[1])


def test_the_server_is_real_private_and_never_runs_as_root(postgres):
    import psycopg

    with psycopg.connect(postgres.uri()) as conn:
        assert conn.execute("SELECT 40 + 2").fetchone() == (42,)
        assert conn.execute("SHOW listen_addresses").fetchone() == ("",)  # socket only
        assert int(conn.execute("SHOW server_version_num").fetchone()[0]) >= 130000
    if os.path.exists("/proc/self/status"):
        assert postmaster_uid(postgres) != 0
    if os.geteuid() == 0:
        assert postgres.os_user != "root"
    else:
        import pwd

        assert postgres.os_user == pwd.getpwuid(os.getuid()).pw_name


def test_fresh_databases_are_separate_and_can_be_dropped(postgres):
    import psycopg

    first, second = postgres.new_database(), postgres.new_database()
    with psycopg.connect(first, autocommit=True) as conn:
        conn.execute("CREATE TABLE only_here (x int)")
    with psycopg.connect(second) as conn:
        assert conn.execute("SELECT to_regclass('only_here')").fetchone() == (None,)
    held_open = psycopg.connect(first)  # dropping closes whatever is still connected
    postgres.drop_database(first)
    postgres.drop_database(second)
    held_open.close()
    with pytest.raises(psycopg.OperationalError, match="does not exist"):
        psycopg.connect(first)
    with pytest.raises(ValueError, match="lower-case letters"):
        postgres.new_database("Robert'); DROP TABLE students;--")
    with pytest.raises(ValueError, match="lower-case letters"):
        postgres.uri(schema="a b")
    with pytest.raises(ValueError, match="refusing to drop"):
        postgres.drop_database("postgres")


def test_stop_ends_the_server_and_removes_its_folder_but_not_from_a_child(own_postgres):
    import psycopg

    server = own_postgres
    try:
        pid = os.fork()
        if pid == 0:  # a forked child (like a crash worker) calling stop must not stop it
            server.stop()
            os._exit(0)
        os.waitpid(pid, 0)
        with psycopg.connect(server.uri()) as conn:
            assert conn.execute("SELECT 1").fetchone() == (1,)
    finally:
        server.stop()
    assert not server.base.exists()
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(server.uri(), connect_timeout=2)
    server.stop()  # twice is fine


def test_ci_fails_loudly_where_a_student_machine_skips(tmp_path):
    """With no usable PostgreSQL, CI=true must fail the Postgres tests; elsewhere they skip."""
    target = "tests/test_postgres_server.py::test_the_server_is_real_private_and_never_runs_as_root"
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env["COURSE_PG_BINDIR"] = str(tmp_path / "no-postgres-here")
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # the fixture needs no plugin; saves seconds

    def run(**extra: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                               "-rs", target], cwd=ROOT, env={**env, **extra},
                              capture_output=True, text=True, timeout=120)

    ci = run(CI="true")
    assert ci.returncode != 0, ci.stdout
    assert "PostgreSQL could not start in CI" in ci.stdout
    assert "COURSE_PG_BINDIR" in ci.stdout  # the reason, not just "failed"
    student = run()
    assert student.returncode == 0, student.stdout
    assert "1 skipped" in student.stdout
    assert "PostgreSQL could not start: COURSE_PG_BINDIR" in student.stdout
    # Every Postgres test of this file goes through the fixture: none fails, all skip.
    everything = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         "tests/test_postgres_server.py", "-k", "not ci_fails_loudly"], cwd=ROOT, env=env,
        capture_output=True, text=True, timeout=120)
    assert everything.returncode == 0, everything.stdout
    others = Path(__file__).read_text().count("\ndef test_") - 1
    assert "failed" not in everything.stdout and f"{others} skipped" in everything.stdout


def test_a_fresh_schema_keeps_unqualified_tables_apart(postgres):
    import psycopg

    first, second = postgres.new_schema(), postgres.new_schema()
    try:
        with psycopg.connect(first, autocommit=True) as conn:
            conn.execute("CREATE TABLE notes (x int)")
            conn.execute("INSERT INTO notes VALUES (1)")
        with psycopg.connect(second, autocommit=True) as conn:
            assert conn.execute("SELECT to_regclass('notes')").fetchone() == (None,)
    finally:
        postgres.drop_schema(first)
        postgres.drop_schema(second)
    with psycopg.connect(postgres.uri()) as conn:
        assert conn.execute("SELECT to_regclass('public.notes')").fetchone() == (None,)
    with pytest.raises(ValueError, match="names no schema"):
        postgres.drop_schema(postgres.uri())


def test_initdb_runs_once_then_its_copy_is_used_and_a_bad_copy_is_replaced(
        postgres, tmp_path, monkeypatch):
    import psycopg

    from course.storage import postgres as pg

    monkeypatch.setattr(pg, "machine_cache", lambda: tmp_path)  # a machine never seen
    ran: list[str] = []
    real_run = pg.TempPostgres._run

    def counting(self, program, args, what):
        ran.append(program)
        return real_run(self, program, args, what)

    monkeypatch.setattr(pg.TempPostgres, "_run", counting)

    def start_and_check() -> None:
        server = pg.TempPostgres.start()
        try:
            with psycopg.connect(server.new_database(), autocommit=True) as conn:
                conn.execute("CREATE TABLE t (x int); INSERT INTO t VALUES (7)")
                assert conn.execute("SELECT x FROM t").fetchone() == (7,)
            assert postmaster_uid(server) != 0
        finally:
            server.stop()

    start_and_check()
    assert ran.count("initdb") == 1
    [template] = [p for p in tmp_path.iterdir() if p.name.startswith("pg-data-")]
    assert (template / "PG_VERSION").is_file() and oct(template.stat().st_mode)[-3:] == "700"
    assert template.stat().st_uid == postmaster_owner(postgres)

    start_and_check()
    assert ran.count("initdb") == 1  # the second server started from the copy

    (template / "global" / "pg_control").write_bytes(b"not a control file")
    start_and_check()  # the copy would not start: thrown away, initdb again, kept again
    assert ran.count("initdb") == 2
    assert (template / "global" / "pg_control").read_bytes() != b"not a control file"
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".partial")]


def postmaster_owner(server) -> int:
    return (server.data / "PG_VERSION").stat().st_uid
