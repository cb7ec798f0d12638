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


def test_the_prediction_check_shows_no_value_before_the_learner_asks(tmp_path, capsys):
    """Exercise 3's check cell (after the tests) runs under Run All: with PREDICTION empty it
    shows nothing of the run; with a wrong one it names the fields that differ, not the run's
    values (the learner looks at `after` when they choose to)."""
    from course.cloudwave import refund_graph
    from course.world import World

    given = {"predict_me": refund_graph(World(tmp_path / "w")),
             "PREDICT_INPUT": {"thread_id": "t-marta", "message": "Marta here. Please refund "
                               "inv_11, and maybe cancel my plan later."}}
    check = _cell("cell-39")
    exec(check, dict(given))
    shown = capsys.readouterr().out
    assert "Fill in PREDICTION first" in shown and "inv_11" not in shown
    wrong = {"intent": "cancel", "invoice_id": "inv_11", "customer_id": "cus_ada", "cents": 129,
             "currency": "usd", "log": ["parse"]}
    namespace = {**given, "PREDICTION": wrong}
    exec(check, namespace)
    shown = capsys.readouterr().out
    assert shown.count("differs") == 5 and shown.count("as you predicted") == 1
    for value in ("cus_marta", "12900", "eur", "refund", "retrieve"):
        assert value not in shown, value
    assert namespace["after"]["customer_id"] == "cus_marta"  # there when asked for
