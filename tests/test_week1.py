"""Week 1 ("A graph is a plan"): its own tests.

The checks every declared week gets (``tests/week_checks.py``, from
``solutions/week1/week.toml`` and its answer files in ``solutions/week1/answers/``) are
collected here by ``tests/conftest.py``;
this module holds week 1's own tests.
"""

from __future__ import annotations

from weeks import NBGRADER_WARNINGS, cells, release_of, source_of

SOURCE, RELEASE = source_of(1), release_of(1)
pytestmark = NBGRADER_WARNINGS


# ------------------------------------------------------------ week 1's own checks
def _cell(cell_id: str) -> str:
    return next(c.source for c in cells(SOURCE) if c.get("id") == cell_id)


def test_the_reference_parse_is_exercise_1s_spec_and_adds_what_the_picture_says():
    """Exercise 3 runs the course's parse as "your exercise 1": the hidden cases hold for it,
    and its update has exactly the fields the picture (cell 3) gives parse."""
    import ast

    from course.cloudwave import parse as reference

    hidden = ast.parse(_cell("ex1-parse-hidden"))
    cases = next(ast.literal_eval(node.value) for node in ast.walk(hidden)
                 if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "_cases")
    assert {intent for _, intent, _ in cases} == {"refund", "pause", "cancel", "charge", "unknown"}
    for message, intent, invoice in cases:
        assert reference({"message": message}, None) == {
            "intent": intent, "invoice_id": invoice, "log": ["parse"]}, message
    picture = _cell("cell-03")
    assert "intent" in picture and "invoice_id" in picture and 'log+["parse"]' in picture


def test_the_text_sends_no_one_to_the_reference_source():
    """Exercise 1's answer is in nodes.py and exercise 2's in graph.py: the notebook shows what
    a student needs (docstrings, the catalogue) instead, and says why not to read the package."""
    text = "\n".join(c.source for c in cells(RELEASE))
    for path in ("cloudwave/nodes.py", "cloudwave/graph.py", "cloudwave/plan.py",
                 "world/catalogue.py"):
        assert path not in text, path
    assert "reference\nimplementation" in text and "spoils the exercise" in text
