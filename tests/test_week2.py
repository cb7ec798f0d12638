"""Week 2 ("Tools, routes, failures"): the notebooks, their nbgrader grading and ``make check``.

One nbgrader run (module-scoped) grades the solution and every known-wrong answer below
(in bundles of one wrong answer per exercise, see ``tests/week_pipeline.py``);
``make check WEEK=2`` runs on the untouched release meanwhile. Each wrong answer is what a
student would plausibly write, and must lose points on its own exercise only.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import week_pipeline as wp
from week_pipeline import Wrong
from weeks import cells, output_text

REPO = Path(__file__).resolve().parent.parent
SOURCE = REPO / "solutions" / "week2" / "week2.ipynb"
RELEASE = REPO / "week2" / "week2.ipynb"
TOTAL = 22
pytestmark = wp.NBGRADER_WARNINGS

ROUTE_HIDDEN = frozenset({"ex1_route_hidden"})
SIMULATE_TESTS = frozenset({"ex2_simulate_visible", "ex2_simulate_hidden"})
CLASSIFY_HIDDEN = frozenset({"ex3_classify_hidden"})
NODES = ("parse", "retrieve", "refund", "pause", "cancel", "answer", "email")
WRITES = ("refund", "pause", "cancel", "email")


def _classified(kinds: dict, may_retry: dict) -> str:
    return f"KINDS = {kinds!r}\nMAY_RETRY = {may_retry!r}\n"


_KINDS = {n: "write" if n in WRITES else "read" for n in NODES}
_MAY_RETRY = {n: n not in WRITES for n in NODES}
_READ_RETRY = ("RetryPolicy(max_attempts=3, initial_interval=0.05, jitter=False, "
               "retry_on=CatalogueTimeout)")

WRONG = {
    # Exercise 1: the route function
    "ex1_falls_back_to_refund": Wrong(1, {"ex1_route": (
        "def route(state):\n    intent = state.get('intent')\n"
        "    return intent if intent in ('refund', 'pause', 'cancel') else 'refund'\n")},
        ROUTE_HIDDEN),
    "ex1_returns_the_intent_as_is": Wrong(1, {"ex1_route": (
        "def route(state):\n    return state['intent']\n")}, ROUTE_HIDDEN),
    "ex1_else_cancel": Wrong(1, {"ex1_route": (
        "def route(state):\n    if state.get('intent') == 'refund':\n        return 'refund'\n"
        "    elif state.get('intent') == 'pause':\n        return 'pause'\n"
        "    else:\n        return 'cancel'\n")}, ROUTE_HIDDEN),
    # Exercise 2: the simulation
    "ex2_formula_not_simulation": Wrong(2, {"ex2_simulate": (
        "def simulate(p, n, runs=10_000, seed=0):\n    return p ** n\n")},
        frozenset({"ex2_simulate_hidden"})),
    "ex2_one_draw_per_run": Wrong(2, {"ex2_simulate": (
        "import random\n\n\ndef simulate(p, n, runs=10_000, seed=0):\n"
        "    rng = random.Random(seed)\n"
        "    return sum(rng.random() < p for _ in range(runs)) / runs\n")}, SIMULATE_TESTS),
    "ex2_unseeded": Wrong(2, {"ex2_simulate": (
        "import random\n\n\ndef simulate(p, n, runs=10_000, seed=0):\n"
        "    wins = sum(all(random.random() < p for _ in range(n)) for _ in range(runs))\n"
        "    return wins / runs\n")}, frozenset({"ex2_simulate_hidden"})),
    # the formula in disguise: one draw per run, compared with p**n (close to p**n, not a
    # step-by-step simulation: the hidden test replays one draw per step)
    "ex2_one_draw_against_the_formula": Wrong(2, {"ex2_simulate": (
        "import random\n\n\ndef simulate(p, n, runs=10_000, seed=0):\n"
        "    rng = random.Random(seed)\n"
        "    return sum(rng.random() < p ** n for _ in range(runs)) / runs\n")},
        frozenset({"ex2_simulate_hidden"})),
    "ex2_calls_the_courses_simulation": Wrong(2, {"ex2_simulate": (
        "from course.classroom import simulate_success\n\n\n"
        "def simulate(p, n, runs=10_000, seed=0):\n"
        "    return simulate_success(p, n, runs, seed)\n")}, frozenset({"ex2_simulate_hidden"})),
    # Exercise 3: reads and writes
    "ex3_email_is_a_read": Wrong(3, {"ex3_classify": _classified(
        {**_KINDS, "email": "read"}, {**_MAY_RETRY, "email": True})}, CLASSIFY_HIDDEN),
    "ex3_writes_may_retry": Wrong(3, {"ex3_classify": _classified(
        _KINDS, {n: True for n in NODES})}, CLASSIFY_HIDDEN),
    "ex3_never_retry_anything": Wrong(3, {"ex3_classify": _classified(
        _KINDS, {n: False for n in NODES})}, CLASSIFY_HIDDEN),
    "ex3_parse_may_not_retry": Wrong(3, {"ex3_classify": _classified(
        _KINDS, {**_MAY_RETRY, "parse": False, "answer": False})}, CLASSIFY_HIDDEN),
    # Exercise 4: the retry policies
    "ex4_default_policies_everywhere": Wrong(4, {"ex4_policies": (
        "POLICIES = {'retrieve': RetryPolicy(), 'refund': RetryPolicy()}\n")},
        frozenset({"ex4_policies_visible", "ex4_policies_hidden"})),
    "ex4_refund_retries_provider_timeout": Wrong(4, {"ex4_policies": (
        f"POLICIES = {{'retrieve': {_READ_RETRY},\n"
        "            'refund': RetryPolicy(initial_interval=0.05, jitter=False,\n"
        "                                  retry_on=ProviderTimeout)}\n")},
        frozenset({"ex4_policies_hidden"})),
    "ex4_max_attempts_counts_retries": Wrong(4, {"ex4_policies": (
        "POLICIES = {'retrieve': RetryPolicy(max_attempts=2, initial_interval=0.05, jitter=False,\n"
        "                                    retry_on=CatalogueTimeout)}\n")},
        frozenset({"ex4_policies_visible"})),
}


# ------------------------------------------------------------ the notebooks
@pytest.mark.parametrize("path", [SOURCE, RELEASE], ids=["solution", "release"])
def test_committed_notebooks_have_no_outputs(path):
    wp.assert_no_outputs(path)


def test_every_exercise_has_visible_and_hidden_tests_with_points():
    wp.assert_every_exercise_has_visible_and_hidden_tests(SOURCE, 4, TOTAL, [2, 2, 2])


def test_the_release_hides_solutions_hidden_tests_and_model_answers():
    wp.assert_release_hides_the_answers(SOURCE, RELEASE, [
        "rng.random() < p", "MAY_RETRY = {\"parse\": True", "_counted_refund",
        "0.95^20 is about 36 %"])


def test_every_exercise_has_wrong_answers_that_target_its_own_tests():
    wp.assert_wrong_answers_cover_every_exercise(SOURCE, WRONG, at_least=3)


def test_tests_read_only_their_own_exercises_answers():
    """What makes grading wrong answers in bundles (one per exercise) sound."""
    wp.assert_tests_use_only_their_own_answers(SOURCE)


# ------------------------------------------------------ the nbgrader pipeline
@pytest.fixture(scope="module")
def pipeline(tmp_path_factory):
    return wp.grade_week(2, SOURCE, WRONG, tmp_path_factory.mktemp("week2-grading"))


@pytest.mark.slow
def test_the_committed_release_is_what_generate_assignment_makes(pipeline):
    wp.assert_release_is_generated(pipeline, 2, RELEASE)


@pytest.mark.slow
def test_the_solution_runs_headless_without_errors_and_shows_the_demos(pipeline):
    wp.assert_solution_runs_clean(pipeline, 2)
    text = output_text(wp.executed_solution(pipeline, 2))
    assert "['parse', 'retrieve', 'answer', 'email']      ← Why was I billed" in text
    assert "intent: refund | invoice: inv_10" in text  # the scripted model's tool call
    assert "scripted model (CLOUDWAVE_CHAT_MODEL is not set)" in text
    assert "the same graph, this model: ['parse', 'retrieve', 'refund', 'email']" in text
    assert "default retry_on says retry: False" in text
    assert "FlakyCatalogue(timeouts=2, calls=3)" in text  # retried twice, then answered
    assert "the bank holds: [('re_000001', 500), ('re_000002', 500)]" in text  # the trap
    assert "doubles: [{'invoice_id': 'inv_9', 'what': 'charges', 'count': 2}]" in text
    assert "image/png" in text  # the plot of the student's simulation


@pytest.mark.slow
def test_the_solution_gets_full_marks(pipeline):
    wp.assert_full_marks(pipeline, 2, TOTAL, written=3)


@pytest.mark.slow
def test_make_check_on_the_untouched_release_prints_zero(pipeline):
    wp.assert_blank_release_scores_zero(pipeline, 2, TOTAL)


@pytest.mark.slow
def test_every_bundle_of_wrong_answers_loses_exactly_their_tests(pipeline):
    wp.assert_every_bundle_loses_exactly_its_wrong_answers(pipeline, WRONG)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(WRONG))
def test_a_wrong_answer_loses_points_on_its_own_exercise(pipeline, name):
    wp.assert_wrong_answer_loses_its_own_points(pipeline, SOURCE, name, WRONG[name])


# ------------------------------------------------- what the hidden tests say
@pytest.mark.slow
@pytest.mark.parametrize("name, says", [
    ("ex1_returns_the_intent_as_is",
     "returned 'unknown', which is not a branch (the branches are refund, pause, cancel, "
     "answer): anything you did not plan for must go to 'answer'"),
    ("ex1_falls_back_to_refund", "went to 'refund', a branch that acts"),
    ("ex2_one_draw_against_the_formula", "is not what one rng.random() per step gives"),
    ("ex2_calls_the_courses_simulation", "simulate runs the course's own code"),
    ("ex3_never_retry_anything", "MAY_RETRY['parse'] = False refuses a retry that is safe"),
    ("ex3_parse_may_not_retry", "MAY_RETRY['answer'] = False refuses a retry that is safe"),
    ("ex3_writes_may_retry", "MAY_RETRY['refund'] = True allows a retry that is not safe"),
    ("ex4_default_policies_everywhere", "it started 3 times, where it must start once"),
    ("ex4_refund_retries_provider_timeout", "give refund no retry policy"),
])
def test_a_failing_hidden_test_says_which_way_the_answer_is_wrong(pipeline, name, says):
    report = pipeline["reports"][pipeline["bundle_of"][name]]
    said = [t.message for t in report.failed() if t.grade_id in WRONG[name].fails]
    assert any(says in message for message in said), said


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
