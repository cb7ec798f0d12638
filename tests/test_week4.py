"""Week 4 (wait for a human): the notebooks, the nbgrader pipeline and ``make check WEEK=4``.

The same shape as week 3's module: one nbgrader run grades the solution and the known-wrong
answers (several to a submission, one per exercise) while ``make check WEEK=4`` grades the
untouched release in the background. Exercise 3 asks for a test, so its wrong answers are
tests that are too weak: they pass graphs that are broken.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from weeks import (
    answers_used_across_exercises,
    cells,
    code_cells_with_outputs,
    combine_wrong_answers,
    errors_in,
    exercises_and_test_kinds,
    finish,
    graded,
    nbgrader_state_in_repo,
    output_text,
    start_make_check,
)

from course.grading import autograde as grading

REPO = Path(__file__).resolve().parent.parent
SOURCE = REPO / "solutions" / "week4" / "week4.ipynb"
RELEASE = REPO / "week4" / "week4.ipynb"
TOTAL = 19
pytestmark = [
    pytest.mark.filterwarnings("ignore:Object of type <Submitted:sqlalchemy.exc.SAWarning"),
    pytest.mark.filterwarnings("ignore::nbformat.warnings.MissingIDFieldWarning"),
]


def _swap(old: str, new: str):
    def edit(source: str) -> str:
        assert old in source, f"the solution no longer contains {old!r}"
        return source.replace(old, new)
    return edit


THRESHOLD = '''    if state["cents"] <= APPROVAL_THRESHOLD_CENTS:
        decision = {"approved": True, "reason": "under the approval threshold"}
        return {"approved": True, "decision": decision, "log": ["approve"]}
'''
DECISION = 'decision = {"approved": bool(answer["approved"]), "reason": answer.get("reason", "")}'
KEY = 'email_id=f"{state[\'thread_id\']}:approval_needed")'
CHECKS = '''    assert result.paused and result.first_ended == "SIGKILL", (
        f"the first process did not pause and die: it ended with {result.first_ended}")
    assert result.refunds_while_paused == 0, "money moved before anyone approved"
    assert result.refunds == 1, f"{result.refunds} refunds after the approval, not 1"
    assert result.final.get("decision", {}).get("approved") is True, "the approval was lost"
'''

WRONG = {
    ("ex1", "asks_for_every_refund"): {"ex1_approve": _swap(THRESHOLD, "")},
    ("ex1", "ignores_the_answer"): {"ex1_approve": _swap(
        DECISION, 'decision = {"approved": True, "reason": answer.get("reason", "")}')},
    ("ex1", "drops_the_reason"): {"ex1_approve": _swap(
        DECISION, 'decision = {"approved": bool(answer["approved"])}')},
    ("ex1", "asks_a_bare_question"): {"ex1_approve": _swap(
        "interrupt(approval_request(state))", 'interrupt("Approve this refund?")')},
    ("ex2", "heads_up_before_interrupt"): {"ex2_heads_up": _swap(
        "world.mail.send(**approval_notice(state),\n                        " + KEY,
        "world.mail.send(**approval_notice(state))")},
    ("ex2", "key_from_the_clock"): {"ex2_heads_up": _swap(
        KEY, 'email_id=f"{state[\'thread_id\']}:{__import__(\'time\').time_ns()}")')},
    ("ex2", "one_key_for_everyone"): {"ex2_heads_up": _swap(KEY, 'email_id="approval_needed")')},
    ("ex3", "checks_only_the_refund_count"): {"ex3_check": _swap(
        CHECKS, "    assert result.refunds == 1\n")},
    ("ex3", "checks_the_kill_and_that_a_refund_happened"): {"ex3_check": _swap(
        CHECKS, '    assert result.first_ended == "SIGKILL" and result.refunds >= 1\n')},
}
EXPECTED = {
    ("ex1", "asks_for_every_refund"): {"ex1_visible", "ex1_hidden"},
    ("ex1", "ignores_the_answer"): {"ex1_hidden"},  # the visible test only approves
    ("ex1", "drops_the_reason"): {"ex1_visible", "ex1_hidden"},
    ("ex1", "asks_a_bare_question"): {"ex1_hidden"},
    ("ex2", "heads_up_before_interrupt"): {"ex2_visible", "ex2_hidden"},
    ("ex2", "key_from_the_clock"): {"ex2_visible", "ex2_hidden"},
    ("ex2", "one_key_for_everyone"): {"ex2_hidden"},  # one conversation cannot show it
    ("ex3", "checks_only_the_refund_count"): {"ex3_hidden"},
    ("ex3", "checks_the_kill_and_that_a_refund_happened"): {"ex3_hidden"},
}


# ------------------------------------------------------------ the notebooks
@pytest.mark.parametrize("path", [SOURCE, RELEASE], ids=["solution", "release"])
def test_committed_notebooks_have_no_outputs(path):
    assert code_cells_with_outputs(path) == []


def test_every_exercise_has_visible_and_hidden_tests_and_the_points_add_up():
    kinds = exercises_and_test_kinds(SOURCE)
    assert sorted(kinds) == [f"Exercise {n}" for n in range(1, 4)]
    assert all(k == {True, False} for k in kinds.values()), kinds
    points = graded(SOURCE)
    assert all(g["schema_version"] == 3 and g["locked"] for g in points.values()
               if not g["solution"])
    assert sum(g["points"] for g in points.values() if not g["solution"]) == TOTAL
    written = [c for c in cells(SOURCE) if c.metadata.get("nbgrader", {}).get("grade")
               and c.metadata["nbgrader"]["solution"]]
    assert [(c.cell_type, c.metadata["nbgrader"]["points"]) for c in written] == [
        ("markdown", 2)] * 3


def test_no_exercise_is_graded_through_another_exercises_answer():
    assert answers_used_across_exercises(SOURCE) == []


def test_the_release_hides_solutions_hidden_tests_and_model_answers():
    text = RELEASE.read_text()
    for secret in ("BEGIN SOLUTION", "BEGIN HIDDEN TESTS", ":approval_needed",
                   "_pays_twice", "Two rows for one approval"):
        assert secret not in text, secret
    assert graded(RELEASE).keys() == graded(SOURCE).keys()


def test_the_wrong_answers_name_real_cells_of_their_own_exercise():
    ids = graded(SOURCE).keys() | {c.metadata["nbgrader"]["grade_id"] for c in cells(SOURCE)
                                   if c.metadata.get("nbgrader", {}).get("solution")}
    for (exercise, name), edits in WRONG.items():
        assert all(cell.startswith(exercise + "_") and cell in ids for cell in edits), name
        assert EXPECTED[(exercise, name)] <= ids


# ------------------------------------------------------ the nbgrader pipeline
@pytest.fixture(scope="module")
def pipeline(tmp_path_factory):
    root = tmp_path_factory.mktemp("week4-grading")
    folders, where = combine_wrong_answers(SOURCE, root / "wrong", WRONG)
    before = nbgrader_state_in_repo()
    jobs = {"blank": start_make_check(4)}
    try:
        reports = grading.grade(4, {"solution": SOURCE.parent, **folders}, keep=root / "course")
    finally:
        done = finish(jobs)
    assert nbgrader_state_in_repo() == before, "grading wrote nbgrader files into the repo"
    return {"course": root / "course", "reports": reports, "where": where, **done}


@pytest.mark.slow
def test_the_committed_release_is_what_generate_assignment_makes(pipeline):
    fresh = json.loads((pipeline["course"] / "week4" / "week4.ipynb").read_text())
    assert fresh == json.loads(RELEASE.read_text()), (
        "week4/ is out of date: run `make release` and commit week4/")


@pytest.mark.slow
def test_the_solution_runs_headless_without_errors_and_shows_the_demos(pipeline):
    executed = pipeline["course"] / "autograded" / "solution" / "week4" / "week4.ipynb"
    assert errors_in(executed) == []
    text = output_text(executed)
    assert "ended with SIGKILL; refunds while paused: 0" in text
    assert "resumed and ended with exit 0; refunds now: 1" in text
    assert "'being reviewed' mails: 2" in text
    assert "{'answers': [('refund', 'manager says yes')]}" in text  # the order trap
    assert "webhooks delivered: 1" in text


@pytest.mark.slow
def test_the_solution_gets_full_marks(pipeline):
    solution = pipeline["reports"]["solution"]
    assert [t.grade_id for t in solution.failed()] == []
    assert solution.summary() == f"week4: {TOTAL}/{TOTAL}"


@pytest.mark.slow
@pytest.mark.parametrize(("exercise", "name"), list(WRONG), ids=[f"{e}-{n}" for e, n in WRONG])
def test_a_wrong_answer_loses_points_on_its_own_exercise(pipeline, exercise, name):
    report = pipeline["reports"][pipeline["where"][(exercise, name)]]
    failed = {t.grade_id for t in report.failed() if t.grade_id.startswith(exercise + "_")}
    assert failed == EXPECTED[(exercise, name)], "\n".join(report.lines())


@pytest.mark.slow
def test_wrong_answers_lose_nothing_outside_their_exercises(pipeline):
    for student in set(pipeline["where"].values()):
        report = pipeline["reports"][student]
        explained = set().union(*(EXPECTED[k] for k, s in pipeline["where"].items()
                                  if s == student))
        assert {t.grade_id for t in report.failed()} == explained, student
        assert not any(t.timed_out for t in report.tests), student


@pytest.mark.slow
def test_hidden_test_messages_say_what_is_wrong(pipeline):
    said = {key: "\n".join(pipeline["reports"][student].lines())
            for key, student in pipeline["where"].items()}
    assert "the person said no, yet a refund or a mail went out" in said[
        ("ex1", "ignores_the_answer")]
    assert "the person is not shown what the approval lets happen" in said[
        ("ex1", "asks_a_bare_question")]
    assert "each conversation needs exactly one" in said[("ex2", "one_key_for_everyone")]
    assert "check_restart passed a graph that never waits" in said[
        ("ex3", "checks_only_the_refund_count")]
    assert "check_restart passed a graph that refunds before the approval" in said[
        ("ex3", "checks_the_kill_and_that_a_refund_happened")]


@pytest.mark.slow
def test_make_check_on_the_untouched_release_prints_zero(pipeline):
    done = pipeline["blank"]
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == f"week4: 0/{TOTAL}"
