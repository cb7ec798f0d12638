"""Shared fixtures: a fresh CloudWave world per test, in a temporary folder."""

from __future__ import annotations

import pytest
from fixtures_pg import postgres, postgres_db, postgres_store, postgres_uri  # noqa: F401

from course.world import World


@pytest.fixture
def world(tmp_path):
    w = World(tmp_path / "world")
    yield w
    w.close()


@pytest.fixture
def billing(world):
    return world.billing

