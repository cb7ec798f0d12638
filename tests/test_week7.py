"""Week 7 (capstone): its own tests.

The checks every declared week gets (``tests/week_checks.py``, from
``solutions/week7/week.toml`` and its answer files in ``solutions/week7/answers/``) are
collected here by ``tests/conftest.py``;
this module holds week 7's own tests.
"""

from __future__ import annotations

import json

import pytest
from weeks import NBGRADER_WARNINGS, output_text

pytestmark = NBGRADER_WARNINGS



# ------------------------------------------------------------ week 7's own checks
@pytest.mark.slow
def test_the_solution_shows_the_postgres_demo_or_why_not(pipeline):
    text = output_text(pipeline.executed_solution)
    assert ("PostgresSaver, guarded tool, killed and resumed: 1 booking(s)" in text
            or "PostgreSQL could not start here" in text)


@pytest.mark.slow
def test_every_claude_cell_of_the_lesson_says_which_cli_ran(pipeline):
    """Issue 33: each lesson cell that starts a Claude session prints the CLI and its
    version; with the real CLI here (it is in CI), that is the real Claude Code CLI."""
    from weeks import cells

    from course.travel.cli import PIN, find

    starts = ("run_session(", "write_then_rewind(", "find_cli(")
    shown = [cell for cell in cells(pipeline.executed_solution)
             if cell["cell_type"] == "code" and "nbgrader" not in cell.get("metadata", {})
             and any(call in "".join(cell["source"]) for call in starts)]
    assert len(shown) >= 5
    # the graded kernel may see another copy of the same CLI (the pinned npm install, or the
    # one in the SDK's wheel, in a sandbox): the version is what must show
    said = f"real Claude Code CLI {PIN}" if find().real else "the course's stand-in claude"
    for cell in shown:
        assert said in output_text_of(cell), (
            f"this cell does not say which CLI ran ({said}):\n{''.join(cell['source'])}")


def output_text_of(cell) -> str:
    return "".join(o.get("text", "") if o.get("output_type") == "stream"
                   else json.dumps(o.get("data", {})) for o in cell.get("outputs", []))
