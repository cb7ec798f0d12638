"""Week 3 (checkpoints): its own tests.

The checks every declared week gets (``tests/week_checks.py``, from
``solutions/week3/week.toml`` and its answer files in ``solutions/week3/answers/``) are
collected here by ``tests/conftest.py``;
this module holds week 3's own tests.
"""

from __future__ import annotations

import re

import pytest
from weeks import NBGRADER_WARNINGS, cells, source_of

pytestmark = NBGRADER_WARNINGS


def test_exercise_4_messages_name_no_mode():
    """Each situation of exercise 4 has its own hidden test, whose message restates the
    situation and names no mode: "waits on every write or keeps nothing mid-run" ruled out
    two of the three and handed over the third."""
    messages = [cell.source.split("### BEGIN HIDDEN TESTS", 1)[1] for cell in cells(source_of(3))
                if cell.metadata.get("nbgrader", {}).get("grade_id", "").startswith("ex4_hidden")]
    assert len(messages) == 3
    for message in messages:
        said = " ".join(re.findall(r'^\s+"(.*)"\)?$', message, re.M))
        assert said and not re.search(r"\b(sync|async|exit)\b", said), said


@pytest.mark.slow
def test_the_blank_release_is_told_each_exercise_is_not_done_yet(pipeline):
    """A hidden test that turns the student's exceptions into messages lets the blank
    answer's NotImplementedError through: "raised NotImplementedError; return None" would
    blame an answer nobody wrote yet."""
    said = [line.strip() for line in pipeline.jobs["blank"].stdout.splitlines()
            if line.startswith("      ")]
    assert len(said) == 14, said
    assert all(line.startswith(("NotImplementedError: the exercise is not done yet",
                                "NameError: name 'MODES' is not defined")) for line in said), said
