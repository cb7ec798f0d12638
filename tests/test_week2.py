"""Week 2 ("Tools, routes, failures"): the notebooks, their nbgrader grading and ``make check``.

One nbgrader run (module-scoped) grades the solution and the first known-wrong answer
of each exercise (in one bundle, one wrong answer per exercise, see ``tests/weeks.py``); one
run of the solution forks to check every wrong answer (``tests/forked_answers.py``), and
``make check WEEK=2`` runs on the untouched release meanwhile. Each wrong answer is what a
student would plausibly write, and must lose points on its own exercise only.
"""

from __future__ import annotations

import pytest
from weeks import NBGRADER_WARNINGS, Wrong, cells, source_of, week_suite

SOURCE = source_of(2)
pytestmark = NBGRADER_WARNINGS

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
        "    return simulate_success(p, n, runs, seed)\n")},
        frozenset({"ex2_simulate_visible", "ex2_simulate_hidden"})),
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


globals().update(week_suite(
    week=2, exercises=4, total=22, written=[2, 2, 2], wrongs=WRONG, at_least=3, bundled=1,
    demos=[
        "['parse', 'retrieve', 'answer', 'email']      ← Why was I billed",
        "intent: refund | invoice: inv_10",  # the scripted model's tool call
        "scripted model (CLOUDWAVE_CHAT_MODEL is not set)",
        "the same graph, this model: ['parse', 'retrieve', 'refund', 'email']",
        "default retry_on says retry: False",
        "FlakyCatalogue(timeouts=2, calls=3)",  # retried twice, then answered
        "the bank holds: [('re_000001', 500), ('re_000002', 500)]",  # the trap
        "doubles: [{'invoice_id': 'inv_9', 'what': 'charges', 'count': 2}]",
        "image/png",  # the plot of the student's simulation
    ],
    said={  # a failing hidden test says which way the answer is wrong
        "ex1_returns_the_intent_as_is":
            "returned 'unknown', which is not a branch (the branches are refund, pause, "
            "cancel, answer): anything you did not plan for must go to 'answer'",
        "ex1_falls_back_to_refund": "went to 'refund', a branch that acts",
        "ex2_one_draw_against_the_formula": "is not what one rng.random() per step gives",
        "ex2_calls_the_courses_simulation": "simulate runs the course's own code",
        "ex3_never_retry_anything": "MAY_RETRY['parse'] = False refuses a retry that is safe",
        "ex3_parse_may_not_retry": "MAY_RETRY['answer'] = False refuses a retry that is safe",
        "ex3_writes_may_retry": "MAY_RETRY['refund'] = True allows a retry that is not safe",
        "ex4_default_policies_everywhere": "it started 3 times, where it must start once",
        "ex4_refund_retries_provider_timeout": "give refund no retry policy",
    },
    secrets=["rng.random() < p", "MAY_RETRY = {\"parse\": True", "_counted_refund",
             "0.95^20 is about 36 %"],
))


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
