"""Shared fixtures: a fresh CloudWave world per test, in a temporary folder.

Also the CI hooks of :mod:`ci` (under CI a skipped Postgres or browser test fails the run)
and the week collector of :mod:`week_checks`: every ``tests/test_weekN.py`` is collected with the
checks every declared week gets, and its ``declared`` and ``pipeline`` fixtures.
"""

from __future__ import annotations

import pytest
from ci import (  # noqa: F401
    pytest_collection_modifyitems,
    pytest_runtest_logreport,
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
from week_checks import WEEK_MODULE, WeekModule, parametrize_answers, week_number
from week_pipeline import Grading, grade_week

from course.grader.declaration import load
from course.world import World


def pytest_pycollect_makemodule(module_path, parent):
    if WEEK_MODULE.fullmatch(module_path.name):
        return WeekModule.from_parent(parent, path=module_path)
    return None


def pytest_generate_tests(metafunc):
    parametrize_answers(metafunc)


@pytest.fixture(scope="module")
def declared(request):
    """The declaration of the week whose module this is (``test_weekN.py``)."""
    return load(week_number(request.module.__file__))


@pytest.fixture(scope="module")
def pipeline(request, declared, tmp_path_factory):
    """The week's one grading run (:func:`week_pipeline.grade_week`), with what its module adds
    (``GRADING``)."""
    root = tmp_path_factory.mktemp(f"week{declared.number}-grading")
    return grade_week(declared, root, getattr(request.module, "GRADING", None) or Grading())


@pytest.fixture
def world(tmp_path):
    w = World(tmp_path / "world")
    yield w
    w.close()


@pytest.fixture
def billing(world):
    return world.billing

