"""Shared fixtures: a fresh CloudWave world per test, in a temporary folder."""

from __future__ import annotations

import pytest

from course.world import World


@pytest.fixture
def world(tmp_path):
    w = World(tmp_path / "world")
    yield w
    w.close()


@pytest.fixture
def billing(world):
    return world.billing


@pytest.fixture
def postgres_store():
    pytest.skip("the Postgres idempotency store arrives with the Postgres fixture")
