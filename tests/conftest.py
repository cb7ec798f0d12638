"""Shared fixtures: a fresh CloudWave world per test, in a temporary folder.

Also the CI hooks of :mod:`ci`: under CI a skipped Postgres or browser test fails the run.
"""

from __future__ import annotations

import pytest
from ci import (  # noqa: F401
    pytest_collection_modifyitems,
    pytest_runtest_makereport,
    pytest_sessionfinish,
)
from fixtures_pg import (  # noqa: F401
    own_postgres,
    postgres,
    postgres_db,
    postgres_store,
    postgres_uri,
)

from course.world import World


@pytest.fixture
def world(tmp_path):
    w = World(tmp_path / "world")
    yield w
    w.close()


@pytest.fixture
def billing(world):
    return world.billing

