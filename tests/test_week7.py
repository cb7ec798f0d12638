"""Week 7 (capstone): its own tests.

The checks every declared week gets (``tests/week_checks.py``, from
``solutions/week7/week.toml`` and its answer files in ``solutions/week7/answers/``) are
collected here by ``tests/conftest.py``;
this module holds week 7's own tests.
"""

from __future__ import annotations

import pytest
from weeks import NBGRADER_WARNINGS, output_text

pytestmark = NBGRADER_WARNINGS



# ------------------------------------------------------------ week 7's own checks
@pytest.mark.slow
def test_the_solution_shows_the_postgres_demo_or_why_not(pipeline):
    text = output_text(pipeline.executed_solution)
    assert ("PostgresSaver, guarded tool, killed and resumed: 1 booking(s)" in text
            or "PostgreSQL could not start here" in text)
