"""Week 3 (checkpoints): the notebooks, the nbgrader pipeline and ``make check WEEK=3``.

One module-scoped pipeline, as in week 5: ``make check WEEK=3`` runs on the untouched
release in the background while this process grades, in ONE nbgrader run, the solution
and the known-wrong answers, keeping the course folder (its regenerated release and its
executed solution are checked too). The wrong answers are packed several to a submission
(one per exercise), which is sound because no exercise's tests use another exercise's
answers (checked below); each one must lose points on its own exercise and only there.
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
SOURCE = REPO / "solutions" / "week3" / "week3.ipynb"
RELEASE = REPO / "week3" / "week3.ipynb"
TOTAL = 21
pytestmark = [
    pytest.mark.filterwarnings("ignore:Object of type <Submitted:sqlalchemy.exc.SAWarning"),
    pytest.mark.filterwarnings("ignore::nbformat.warnings.MissingIDFieldWarning"),
]


def _swap(old: str, new: str):
    def edit(source: str) -> str:
        assert old in source, f"the solution no longer contains {old!r}"
        return source.replace(old, new)
    return edit


RESUME = "return graph.invoke(None, config_of(thread_id))"
FIND = '''    for snapshot in graph.get_state_history(config):
        if node in snapshot.next:
            return snapshot.config
    return None'''
FORK = '''    forked = graph.update_state(past_config, {"refund_cents": cents})
    return graph.invoke(None, forked)'''

# (exercise, what the student did) -> the cells it changes, and the tests it must fail
WRONG = {
    ("ex1", "resend_saved_values"): {"ex1_resume": _swap(
        RESUME, "config = config_of(thread_id)\n"
                "    return graph.invoke(graph.get_state(config).values, config)")},
    ("ex1", "no_checkpointer"): {"ex1_resume": _swap(
        "world=world, checkpointer=InMemorySaver())", "world=world)")},
    ("ex1", "new_thread_id"): {"ex1_resume": _swap(
        RESUME, 'return graph.invoke(None, config_of(thread_id + "-retry"))')},
    ("ex2", "checkpoint_where_the_node_ran"): {"ex2_checkpoint_before": _swap(FIND, '''\
    for snapshot in graph.get_state_history(config):
        if snapshot.values.get("log", [])[-1:] == [node]:
            return snapshot.config
    return None''')},
    ("ex2", "oldest_match"): {"ex2_checkpoint_before": _swap(
        "for snapshot in graph.get_state_history(config):",
        "for snapshot in reversed(list(graph.get_state_history(config))):")},
    ("ex3", "replay_without_update"): {"ex3_fork": _swap(
        FORK, "    return graph.invoke(None, past_config)")},
    ("ex3", "continue_from_the_old_config"): {"ex3_fork": _swap(
        "return graph.invoke(None, forked)", "return graph.invoke(None, past_config)")},
    ("ex3", "update_the_latest_checkpoint"): {"ex3_fork": _swap(FORK, '''\
    latest = config_of(past_config["configurable"]["thread_id"])
    forked = graph.update_state(latest, {"refund_cents": cents})
    return graph.invoke(None, forked)''')},
    ("ex3", "start_the_thread_over"): {"ex3_fork": _swap(FORK, '''\
    thread_id = past_config["configurable"]["thread_id"]
    message = graph.get_state(past_config).values["message"]
    graph.checkpointer.delete_thread(thread_id)
    return graph.invoke({"thread_id": thread_id, "message": message, "refund_cents": cents},
                        config_of(thread_id))''')},
    ("ex4", "sync_everywhere"): {"ex4_modes": _swap(
        '{"A": "sync", "B": "async", "C": "exit"}', '{"A": "sync", "B": "sync", "C": "sync"}')},
    ("ex4", "async_and_exit_swapped"): {"ex4_modes": _swap(
        '{"A": "sync", "B": "async", "C": "exit"}', '{"A": "sync", "B": "exit", "C": "async"}')},
}
BOTH_EX1 = {"ex1_refund_fails_then_resumes", "ex1_hidden"}
EXPECTED = {
    ("ex1", "resend_saved_values"): BOTH_EX1,
    ("ex1", "no_checkpointer"): BOTH_EX1,
    ("ex1", "new_thread_id"): BOTH_EX1,
    ("ex2", "checkpoint_where_the_node_ran"): {"ex2_visible", "ex2_hidden"},
    ("ex2", "oldest_match"): {"ex2_hidden"},
    ("ex3", "replay_without_update"): {"ex3_visible", "ex3_hidden"},
    ("ex3", "continue_from_the_old_config"): {"ex3_visible", "ex3_hidden"},
    ("ex3", "update_the_latest_checkpoint"): {"ex3_visible", "ex3_hidden"},
    ("ex3", "start_the_thread_over"): {"ex3_hidden"},  # visible passes: only history shows it
    ("ex4", "sync_everywhere"): {"ex4_hidden"},
    ("ex4", "async_and_exit_swapped"): {"ex4_hidden"},
}


# ------------------------------------------------------------ the notebooks
@pytest.mark.parametrize("path", [SOURCE, RELEASE], ids=["solution", "release"])
def test_committed_notebooks_have_no_outputs(path):
    assert code_cells_with_outputs(path) == []


def test_every_exercise_has_visible_and_hidden_tests_and_the_points_add_up():
    kinds = exercises_and_test_kinds(SOURCE)
    assert sorted(kinds) == [f"Exercise {n}" for n in range(1, 5)]
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
    for secret in ("BEGIN SOLUTION", "BEGIN HIDDEN TESTS", '"B": "async"',
                   "checkpoint(s) of the original run are gone", "All of them: the resume"):
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
    root = tmp_path_factory.mktemp("week3-grading")
    folders, where = combine_wrong_answers(SOURCE, root / "wrong", WRONG)
    before = nbgrader_state_in_repo()
    jobs = {"blank": start_make_check(3)}
    try:
        reports = grading.grade(3, {"solution": SOURCE.parent, **folders}, keep=root / "course")
    finally:
        done = finish(jobs)
    assert nbgrader_state_in_repo() == before, "grading wrote nbgrader files into the repo"
    return {"course": root / "course", "reports": reports, "where": where, **done}


@pytest.mark.slow
def test_the_committed_release_is_what_generate_assignment_makes(pipeline):
    fresh = json.loads((pipeline["course"] / "week3" / "week3.ipynb").read_text())
    assert fresh == json.loads(RELEASE.read_text()), (
        "week3/ is out of date: run `make release` and commit week3/")


@pytest.mark.slow
def test_the_solution_runs_headless_without_errors_and_shows_the_demos(pipeline):
    executed = pipeline["course"] / "autograded" / "solution" / "week3" / "week3.ipynb"
    assert errors_in(executed) == []
    text = output_text(executed)
    assert "runs in all: {'parse': 1, 'retrieve': 1, 'refund': 2, 'email': 1}" in text
    assert "a new saver sees next = ('refund',)" in text
    assert "the fork refunded 1500 cents in the sandbox" in text
    assert "'body': 2, 'look_up': 1, 'give_back': 2" in text  # the functional API section
    assert "re_000002  inv_11      4000" in text  # the cliff-hanger: two refunds


@pytest.mark.slow
def test_the_solution_gets_full_marks(pipeline):
    solution = pipeline["reports"]["solution"]
    assert [t.grade_id for t in solution.failed()] == []
    assert solution.summary() == f"week3: {TOTAL}/{TOTAL}"


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
    assert "the resume ran nodes that had already finished" in said[
        ("ex1", "resend_saved_values")]
    assert "the one returned is not the most recent" in said[("ex2", "oldest_match")]
    assert "checkpoint(s) of the original run are gone" in said[
        ("ex3", "start_the_thread_over")]
    assert "B: redoing a read-only step is harmless" in said[("ex4", "sync_everywhere")]


@pytest.mark.slow
def test_make_check_on_the_untouched_release_prints_zero(pipeline):
    done = pipeline["blank"]
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == f"week3: 0/{TOTAL}"
