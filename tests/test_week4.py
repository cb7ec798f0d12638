"""Week 4 (wait for a human): nothing beyond what every week is checked for.

The checks every declared week gets (``tests/week_checks.py``, from
``solutions/week4/week.toml`` and its answer files in ``solutions/week4/answers/``) are
collected here by ``tests/conftest.py``;
exercise 3 asks for a test, so its wrong answers are tests too weak to
catch a broken graph.
"""

from __future__ import annotations

from weeks import NBGRADER_WARNINGS

pytestmark = NBGRADER_WARNINGS
