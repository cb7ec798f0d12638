"""Week 7 (capstone): the notebooks, the nbgrader pipeline, known-wrong answers, ``make check``.

Week 5's pattern (see ``tests/weeks.py``): one module-scoped ``pipeline`` runs ``make check
WEEK=7`` on the untouched release in a background process while this process grades the
solution and every known-wrong answer in ONE nbgrader run, keeping its course folder.

Each wrong submission is the solution with realistic mistakes, one per exercise, so every
exercise is shown at least two wrong answers across the submissions, and each mistake
must lose points on its own exercise and nowhere else.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from weeks import (
    autograded_points,
    code_cells_with_outputs,
    errors_in,
    exercises_and_test_kinds,
    finish,
    graded,
    nbgrader_state_in_repo,
    output_text,
    start_make_check,
    wrong_answer,
)

from course.grading import autograde as grading

REPO = Path(__file__).resolve().parent.parent
SOURCE = REPO / "solutions" / "week7" / "week7.ipynb"
RELEASE = REPO / "week7" / "week7.ipynb"
TOTAL = 30
pytestmark = [
    pytest.mark.filterwarnings("ignore:Object of type <Submitted:sqlalchemy.exc.SAWarning"),
    pytest.mark.filterwarnings("ignore::nbformat.warnings.MissingIDFieldWarning"),
]

# ----------------------------------------------------------------- wrong answers
NAIVE_BOOKING = '''
def book_marta_once(world, trip_id, flight_id):
    """The tool as Marta's agent had it: book and charge, every time."""
    return world.airline.book(customer_id="cus_marta", flight_id=flight_id)
'''

GUARD_WITHOUT_RECONCILE = '''
from course.durable import guarded


def book_marta_once(world, trip_id, flight_id):
    """Guarded, but a booking left in flight raises instead of being settled."""
    def fire(*, customer_id, flight_id, idem_key):
        return world.airline.book(customer_id=customer_id, flight_id=flight_id,
                                  idempotency_key=idem_key)

    return guarded(trip_id, "book_flight", fire,
                   {"customer_id": "cus_marta", "flight_id": flight_id}, store=world.records)
'''

KEY_WITH_THE_PID = '''
import os


def book_marta_once(world, trip_id, flight_id):
    """A key the airline deduplicates on, but it names the process, not the trip."""
    return world.airline.book(customer_id="cus_marta", flight_id=flight_id,
                              idempotency_key=f"{trip_id}:{flight_id}:{os.getpid()}")
'''

RESUME_WITH_CONTINUE = '''
def resume_marta(world, saver):
    agent = marta_agent(world, saver)
    new_input = {"messages": [{"role": "user", "content": "Continue Marta's booking."}]}
    return agent.invoke(new_input, config(TRIP), durability="sync")["messages"]
'''

RESUME_ON_A_NEW_THREAD = '''
def resume_marta(world, saver):
    agent = marta_agent(world, saver)
    retry = {"messages": [{"role": "user", "content": ASK}]}
    return agent.invoke(retry, config("marta-1042-retry"), durability="sync")["messages"]
'''

BRANCH_WITHOUT_FORK = '''
def branch(world_dir, session_id, prompt):
    return run_session(world_dir, prompt, resume=session_id).session_id
'''

BRANCH_AS_A_NEW_SESSION = '''
def branch(world_dir, session_id, prompt):
    return run_session(world_dir, prompt).session_id
'''

FRAMEWORK_DOES_IT_ALL = '''
PROTECTS = {
    "process killed after the booking": ("checkpointer", "none"),
    "container restart": ("session resume", "none"),
    "model changed mid-run": ("checkpointer", "none"),
    "agent wrote a bad file": ("file rewind", "none"),
    "retry after a lost response": ("session resume", "none"),
}
'''

GUARD_FOR_EVERYTHING = '''
PROTECTS = {
    "process killed after the booking": ("checkpointer", "guard"),
    "container restart": ("session resume", "guard"),
    "model changed mid-run": ("none", "guard"),
    "agent wrote a bad file": ("file rewind", "guard"),
    "retry after a lost response": ("none", "guard"),
}
'''

KEYED_CHARGE = '''
from course.durable import guarded


def my_charge(state, world):
    args = {"customer_id": state["customer_id"], "invoice_id": state["invoice_id"],
            "cents": state["cents"], "currency": state["currency"]}

    def capture(idem_key, **kwargs):
        return world.billing.charge(**kwargs, idempotency_key=idem_key)

    return {"charge": guarded(state["thread_id"], "charge", capture, args,
                              store=world.records), "log": ["charge"]}
'''

EMAIL_LEFT_UNKEYED = KEYED_CHARGE + '''

def build_my_graph(world, checkpointer):
    """The charge was fixed; the receipt still goes out with no email id."""
    nodes = {"parse": parse, "retrieve": retrieve, "charge": my_charge, "email": email_naive}
    return build_graph(nodes, world=world, checkpointer=checkpointer)
'''

EMAIL_NODE_REMOVED = KEYED_CHARGE + '''

def build_my_graph(world, checkpointer):
    """The audit flagged the email, so the email went."""
    nodes = {"parse": parse, "retrieve": retrieve, "charge": my_charge}
    return build_graph(nodes, world=world, checkpointer=checkpointer)
'''

CHARGE_KEY_PER_CALL = '''
import uuid

from course.cloudwave import receipt


def build_my_graph(world, checkpointer):
    """Keys everywhere, but the charge's key is new on every call."""
    def charge(state, world):
        result = world.billing.charge(
            customer_id=state["customer_id"], invoice_id=state["invoice_id"],
            cents=state["cents"], currency=state["currency"],
            idempotency_key=f"{state['thread_id']}:charge:{uuid.uuid4()}")
        return {"charge": result, "log": ["charge"]}

    def email(state, world):
        mail = receipt(state)
        sent = world.mail.send(**mail, email_id=f"{state['thread_id']}:{mail['template']}")
        return {"email": sent, "log": ["email"]}

    nodes = {"parse": parse, "retrieve": retrieve, "charge": charge, "email": email}
    return build_graph(nodes, world=world, checkpointer=checkpointer)
'''

WRONG = {  # submission: ({grade_id: new source}, the grade ids it must fail)
    "trusts_the_framework": (
        {"ex1_book_once": NAIVE_BOOKING, "ex2_resume": RESUME_WITH_CONTINUE,
         "ex3_branch": BRANCH_WITHOUT_FORK, "ex4_table": FRAMEWORK_DOES_IT_ALL,
         "ex5_graph": EMAIL_LEFT_UNKEYED},
        {"ex1_twice_in_one_process", "ex1_deep_agents_kill", "ex1_claude_sdk_kill",
         "ex2_pending_call_kept", "ex3_new_session", "ex3_branch_has_history",
         "ex4_row1", "ex4_row2", "ex4_row3", "ex4_row5",
         "ex5_clean_audit", "ex5_still_does_the_job"}),
    "half_guarded": (
        {"ex1_book_once": GUARD_WITHOUT_RECONCILE, "ex2_resume": RESUME_ON_A_NEW_THREAD,
         "ex3_branch": BRANCH_AS_A_NEW_SESSION, "ex4_table": GUARD_FOR_EVERYTHING,
         "ex5_graph": EMAIL_NODE_REMOVED},
        {"ex1_twice_in_one_process", "ex1_deep_agents_kill",
         "ex2_thread_finished", "ex2_pending_call_kept", "ex3_branch_has_history",
         "ex4_row2", "ex4_row3", "ex4_row4", "ex5_still_does_the_job"}),
    "pid_key": (
        {"ex1_book_once": KEY_WITH_THE_PID, "ex5_graph": CHARGE_KEY_PER_CALL},
        {"ex1_twice_in_one_process", "ex1_deep_agents_kill", "ex1_claude_sdk_kill",
         "ex5_clean_audit", "ex5_still_does_the_job"}),
}


def exercise_of(grade_id: str) -> str:
    return grade_id.split("_")[0]


# ------------------------------------------------------------------ the notebooks
@pytest.mark.parametrize("path", [SOURCE, RELEASE], ids=["solution", "release"])
def test_committed_notebooks_have_no_outputs(path):
    assert code_cells_with_outputs(path) == []


def test_every_exercise_has_visible_and_hidden_tests_and_the_points_add_up():
    kinds = exercises_and_test_kinds(SOURCE)
    assert sorted(kinds) == [f"Exercise {n}" for n in range(1, 6)]
    assert all(k == {True, False} for k in kinds.values()), kinds
    assert autograded_points(SOURCE) == TOTAL
    written = [g for g in graded(SOURCE).values() if g["solution"]]
    assert [g["points"] for g in written] == [2, 2, 2]


def test_the_release_hides_solutions_hidden_tests_and_model_answers():
    text = RELEASE.read_text()
    for secret in ("BEGIN SOLUTION", "BEGIN HIDDEN TESTS", "_DiesAfter",
                   "fork_session=True).session_id", "patch middleware answers",
                   '("none", "recovery policy")'):
        assert secret not in text, secret
    assert text.count("raise NotImplementedError()") == 5
    assert graded(RELEASE).keys() == graded(SOURCE).keys()


def test_every_wrong_answer_changes_a_real_cell_and_covers_each_exercise_twice(tmp_path):
    for name, (edits, _) in WRONG.items():
        wrong_answer(SOURCE, tmp_path / name, edits)
    shown = {}
    for edits, _ in WRONG.values():
        for grade_id in edits:
            shown[grade_id] = shown.get(grade_id, 0) + 1
    assert all(count >= 2 for count in shown.values()), shown


# ------------------------------------------------------------ the nbgrader pipeline
@pytest.fixture(scope="module")
def pipeline(tmp_path_factory):
    """`make check WEEK=7` on the untouched release in the background; here, one nbgrader
    run for the solution and every wrong submission, keeping its course folder."""
    root = tmp_path_factory.mktemp("week7-grading")
    folders = {"solution": SOURCE.parent}
    for name, (edits, _) in WRONG.items():
        folders[name] = wrong_answer(SOURCE, root / name, edits)
    before = nbgrader_state_in_repo()
    jobs = {"blank": start_make_check(7)}
    try:
        reports = grading.grade(7, folders, keep=root / "course")
    finally:
        done = finish(jobs, timeout_s=1200)
    assert nbgrader_state_in_repo() == before, "grading wrote nbgrader files into the repo"
    return {"course": root / "course", **reports, **done}


@pytest.mark.slow
def test_the_committed_release_is_what_generate_assignment_makes(pipeline):
    fresh = json.loads((pipeline["course"] / "week7" / "week7.ipynb").read_text())
    assert fresh == json.loads(RELEASE.read_text()), (
        "week7/ is out of date: run `make release` and commit week7/")


@pytest.mark.slow
def test_the_solution_runs_headless_and_shows_every_demo(pipeline):
    executed = pipeline["course"] / "autograded" / "solution" / "week7" / "week7.ipynb"
    assert errors_in(executed) == []
    text = output_text(executed)
    for shown in ("naive tool, killed after booking, resumed: 2 booking(s)",
                  "guarded tool, killed after booking, resumed: 1 booking(s)",
                  "book_naive + 'Continue': cancelled calls ['book_flight']",
                  "book_once + 'Continue': cancelled calls ['book_flight'], book_flight "
                  "answered 2x, 1 booking(s)",
                  "book_naive: transcript ended at ('assistant', 'call book_flight'); after "
                  "resume 2 booking(s)",
                  "book_once: transcript ended at ('assistant', 'call book_flight'); after "
                  "resume 1 booking(s)",
                  "original transcript unchanged: True",
                  "resume after the restart: No conversation found with session ID",
                  "fresh session after the restart: 1 booking(s)",
                  "model_version in the checkpoint metadata: False",
                  "refused: session_store cannot be combined with enable_file_checkpointing",
                  "effects=2 keyed=0 repeatable=2",
                  "effects=2 keyed=2 repeatable=0"):
        assert shown in text, shown
    assert ("PostgresSaver, guarded tool, killed and resumed: 1 booking(s)" in text
            or "PostgreSQL could not start here" in text)


@pytest.mark.slow
def test_the_solution_gets_full_marks(pipeline):
    solution = pipeline["solution"]
    assert [t.grade_id for t in solution.failed()] == []
    assert solution.summary() == f"week7: {TOTAL}/{TOTAL}"
    assert [w[2] for w in solution.written] == [2, 2, 2]


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(WRONG))
def test_each_wrong_answer_loses_points_on_its_own_exercise(pipeline, name):
    report = pipeline[name]
    edits, must_fail = WRONG[name]
    failed = {t.grade_id for t in report.failed()}
    assert failed == must_fail
    assert {exercise_of(g) for g in failed} == {exercise_of(g) for g in edits}
    lost = sum(t.points for t in report.tests if t.grade_id in failed)
    assert report.earned == TOTAL - lost < TOTAL


@pytest.mark.slow
def test_failure_messages_say_what_is_wrong(pipeline):
    said = "\n".join(pipeline["trusts_the_framework"].lines())
    assert "Deep Agents, killed after booking and resumed in a new process: 2 bookings" in said
    assert "the pending book_flight call was cancelled" in said
    assert "the original conversation changed" in said
    said = "\n".join(pipeline["half_guarded"].lines())
    assert "did book_marta_once raise instead of settling the booking" in said
    assert "the crashed thread was not resumed" in said
    assert "the graph's writes are [('charge', 'billing.charge')]" in said
    said = "\n".join(pipeline["pid_key"].lines())
    assert "a booking left in flight was booked again" in said
    assert "side effect(s) can be repeated by a crash" in said


@pytest.mark.slow
def test_make_check_on_the_untouched_release_prints_zero(pipeline):
    done = pipeline["blank"]
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == f"week7: 0/{TOTAL}"
