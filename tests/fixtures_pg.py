"""PostgreSQL fixtures: one real server per test session, fresh schemas and databases per test.

- ``postgres`` (session): a :class:`course.storage.postgres.TempPostgres` started in a
  temporary folder and stopped at the end. It works for a normal user and as
  root (the server then runs as an unprivileged system user; see
  :mod:`course.storage.postgres`).
- ``postgres_uri``: a connection URI whose tables land in a fresh schema
  (dropped after the test): every test gets its own tables, cheaply.
- ``postgres_db``: the URI of a brand-new database, dropped after the test.
- ``postgres_store``: a :class:`course.durable.idempotency_pg.PostgresStore` on ``postgres_uri``.
- ``own_postgres``: a private server for one test (slower: use it only to stop a server).

If the server cannot start, the Postgres tests are skipped with a one-line
reason, except in CI (:func:`ci.in_ci`), where they fail with the whole reason:
CI must never pass by skipping them.
"""

from __future__ import annotations

import pytest
from ci import in_ci


def start_postgres():
    """A new TempPostgres, or skip (fail in CI) with the reason it could not start."""
    try:
        import psycopg  # noqa: F401 - fail early with a clear reason if the extra is missing

        from course.storage.postgres import PostgresUnavailable, TempPostgres
    except ImportError as error:
        problem = f"{error} (install the postgres extra: pip install -e '.[postgres]')"
        server = None
    else:
        try:
            server = TempPostgres.start()
            problem = ""
        except PostgresUnavailable as error:
            server, problem = None, str(error)
    if server is None:
        if in_ci():
            pytest.fail(f"PostgreSQL could not start in CI: {problem}", pytrace=False)
        pytest.skip(f"PostgreSQL could not start: {problem.splitlines()[0]}")
    return server


@pytest.fixture(scope="session")
def postgres():
    server = start_postgres()
    yield server
    server.stop()


@pytest.fixture
def own_postgres():
    """A private server for one test (to stop it, say); the session's is left alone."""
    server = start_postgres()
    yield server
    server.stop()


@pytest.fixture
def postgres_uri(postgres):
    """A URI whose tables land in a fresh schema (``search_path``), dropped after the test."""
    uri = postgres.new_schema()
    yield uri
    postgres.drop_schema(uri)


@pytest.fixture
def postgres_db(postgres):
    """A brand-new database (slower than a schema: use it when a whole database must be fresh)."""
    uri = postgres.new_database()
    yield uri
    postgres.drop_database(uri)


@pytest.fixture
def postgres_store(postgres_uri):
    from course.durable.idempotency_pg import PostgresStore

    store = PostgresStore(postgres_uri)
    yield store
    store.close()
