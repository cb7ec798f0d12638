"""Shared fixtures: a fresh CloudWave world per test, in a temporary folder.

Also the CI hooks of :mod:`ci`: under CI a skipped Postgres or browser test fails the run.
"""

from __future__ import annotations

import pytest
from ci import pytest_runtest_makereport, pytest_sessionfinish  # noqa: F401
from fixtures_pg import (  # noqa: F401
    own_postgres,
    postgres,
    postgres_db,
    postgres_store,
    postgres_uri,
)

from course.world import World

# The files that take longest, longest first (wall seconds of each file run alone, measured
# 2026-12-01: 140, 130, 112, 81, 68, 53, 49, 34, 33, 29, 28, 28, 20, 18). `make test` runs
# the files on two workers in this order (`--dist loadfile --no-loadscope-reorder`), so the
# workers end together instead of one finishing a two-minute file alone; the other files
# follow in the usual order. tests/test_ci.py checks each name is a real file.
LONGEST_FIRST = (
    "test_class_grading.py", "test_week7.py", "test_as_a_student.py", "test_jupyterhub.py",
    "test_student_experience.py", "test_week6.py", "test_week5.py", "test_week3.py",
    "test_week4.py", "test_week2.py", "test_exchange.py", "test_docs_instructors.py",
    "test_hub_formgrader.py", "test_week1.py",
)


def pytest_collection_modifyitems(items):
    rank = {name: place for place, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: files stay whole


@pytest.fixture
def world(tmp_path):
    w = World(tmp_path / "world")
    yield w
    w.close()


@pytest.fixture
def billing(world):
    return world.billing

