"""Week 2 ("Tools, routes, failures"): its own tests.

The checks every declared week gets (``tests/week_checks.py``, from
``solutions/week2/week.toml`` and its answer files in ``solutions/week2/answers/``) are
collected here by ``tests/conftest.py``;
this module holds week 2's own tests.
"""

from __future__ import annotations

import pytest
from weeks import NBGRADER_WARNINGS, cells, source_of

SOURCE = source_of(2)
pytestmark = NBGRADER_WARNINGS

NODES = ("parse", "retrieve", "refund", "pause", "cancel", "answer", "email")
WRITES = ("refund", "pause", "cancel", "email")
_KINDS = {n: "write" if n in WRITES else "read" for n in NODES}


# ------------------------------------------------------------ week 2's own checks
def test_no_refused_retry_is_called_unsafe():
    """The over-cautious answer is told it refused a safe retry, never that retries re-run."""
    namespace = {"KINDS": _KINDS, "MAY_RETRY": {n: False for n in NODES}}
    with pytest.raises(AssertionError) as said:
        exec(compile(_cell("ex3_classify_hidden"), "ex3_classify_hidden", "exec"), namespace)
    assert "allows a retry" not in str(said.value)
    assert str(said.value).count("refuses a retry that is safe") == 3  # parse, retrieve, answer


# ------------------------------------------- a shortcut the simulation test refuses
def _cell(grade_id: str) -> str:
    return next(c.source for c in cells(SOURCE)
                if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)


def _run_simulation_tests(simulate) -> None:
    for grade_id in ("ex2_simulate_visible", "ex2_simulate_hidden"):
        exec(compile(_cell(grade_id), grade_id, "exec"), {"simulate": simulate})


def test_the_visible_simulation_test_does_not_name_the_courses_simulation():
    visible = _cell("ex2_simulate_visible")
    assert "compounding" not in visible and "_steps_survived" not in visible


def test_the_simulation_tests_refuse_a_simulate_that_calls_the_courses():
    from course.classroom import simulate_success

    def delegating(p, n, runs=10_000, seed=0):
        return simulate_success(p, n, runs, seed)

    with pytest.raises(AssertionError, match="simulate runs the course's own code"):
        _run_simulation_tests(delegating)
    solution: dict = {}
    exec(_cell("ex2_simulate"), solution)  # the solution's own simulate passes the same cells
    _run_simulation_tests(solution["simulate"])


# ------------------------------------------- no test cell hands out exercise 1's answer
def test_no_visible_test_of_another_exercise_holds_a_route_that_passes_exercise_1():
    """A route written out in another exercise's visible test (exercise 4 once had the tests'
    own route by intent) would be exercise 1's answer in plain view: every one-argument
    function the release's other visible tests define must fail exercise 1's visible checks."""
    import ast

    from weeks import release_of

    release = {c.metadata.get("nbgrader", {}).get("grade_id"): c.source
               for c in cells(release_of(2))}
    visible = [gid for gid in release if gid and gid.endswith("_visible")
               and not gid.startswith("ex1_")]
    found = 0
    for gid in visible:
        for node in ast.walk(ast.parse(release[gid])):
            if isinstance(node, ast.FunctionDef) and len(node.args.args) == 1:
                namespace: dict = {}
                exec(compile(ast.Module([node], []), gid, "exec"), namespace)
                route = namespace[node.name]
                found += 1
                try:
                    passes = all(route({"intent": i}) == i for i in ("refund", "pause", "cancel")) \
                        and route({"intent": "unknown"}) == "answer"
                except Exception:
                    passes = False
                assert not passes, f"{gid} defines {node.name}, exercise 1's answer"
    assert found, "the other visible tests define routes of their own (the check ran)"
