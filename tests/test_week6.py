"""Week 6: the notebooks, the nbgrader pipeline and ``make check WEEK=6``.

One module-scoped pipeline (see :mod:`weeks`): ``make check WEEK=6`` on the untouched
release runs in a background process while this process grades, in ONE nbgrader run,
the solution and four known-wrong submissions. The exercises do not share answers
(exercise 2's tests swap in the reference policy), so each wrong submission carries one
realistic mistake per exercise and every mistake must cost points on its own exercise
only: 24 wrong answers, at least two per exercise, in five notebook executions.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fixtures_pg import in_ci
from weeks import (
    autograded_points,
    cells,
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
SOURCE = REPO / "solutions" / "week6" / "week6.ipynb"
RELEASE = REPO / "week6" / "week6.ipynb"
TOTAL = 45
pytestmark = [
    pytest.mark.filterwarnings("ignore:Object of type <Submitted:sqlalchemy.exc.SAWarning"),
    pytest.mark.filterwarnings("ignore::nbformat.warnings.MissingIDFieldWarning"),
]


# ------------------------------------------------------------ wrong answers
def _policy(body: str) -> str:
    return ('TRANSIENT = {"timeout", "rate_limit", "network", "restart"}\n\n\n'
            "def select_recovery(error_type, budget_exhausted, checkpoint_corrupt, "
            "is_debugging):\n" + body)


DEBUG_FIRST = _policy("""    if is_debugging:
        return Recovery.BRANCH
    if checkpoint_corrupt or budget_exhausted:
        return Recovery.ABANDON
    if error_type in TRANSIENT:
        return Recovery.RESUME
    return Recovery.ABANDON
""")
RETRIES_EVERYTHING = _policy("""    if checkpoint_corrupt or budget_exhausted:
        return Recovery.ABANDON
    if is_debugging:
        return Recovery.BRANCH
    return Recovery.RESUME  # "it will probably work next time"
""")
ONLY_TIMEOUTS_AND_429 = _policy("""    if checkpoint_corrupt or budget_exhausted:
        return Recovery.ABANDON
    if is_debugging:
        return Recovery.BRANCH
    if error_type in ("timeout", "rate_limit"):
        return Recovery.RESUME
    return Recovery.ABANDON
""")
# the student's shortcut: hand the question to the course's own policy
HANDS_OVER_TO_THE_COURSE = """import course.durable as _cd


def select_recovery(*args):
    return _cd.select_recovery(*args)
"""

_RECOVER_HEAD = """\
def recover(error, run_dir, thread_id, *, budget_exhausted=False, tell_customer=print):
    path = Path(run_dir) / "checkpoints.db"
    diagnosis = diagnose_checkpoints(path, thread_id)
    choice = select_recovery(classify_error(error), budget_exhausted, not diagnosis.ok, False)
"""
RESUME_WITHOUT_SETTLING = _RECOVER_HEAD + """    if choice is Recovery.RESUME:
        world, saver, graph = open_thread(run_dir)
        graph.invoke(None, config_of(thread_id), durability="sync")
        return choice
    world = World(run_dir)
    where = {"checkpointer": open_thread(run_dir)[1]} if diagnosis.ok else {"corrupt_file": path}
    abandon(thread_id, store=world.records, lookup=world.find_listed,
            tell_customer=tell_customer, reason="stopped", **where)
    return choice
"""
ABANDON_WITHOUT_SETTLING = _RECOVER_HEAD + """    if choice is Recovery.RESUME:
        world, saver, graph = open_thread(run_dir)
        resume(graph, config_of(thread_id), store=world.records, lookup=world.find_listed)
        return choice
    if diagnosis.ok:
        open_thread(run_dir)[1].delete_thread(thread_id)
    else:
        path.rename(path.with_name(path.name + ".broken"))
    tell_customer("We stopped working on your request.")
    return choice
"""
CUSTOMER_NEVER_TOLD = _RECOVER_HEAD + """    if choice is Recovery.RESUME:
        world, saver, graph = open_thread(run_dir)
        resume(graph, config_of(thread_id), store=world.records, lookup=world.find_listed)
        return choice
    world = World(run_dir)
    where = {"checkpointer": open_thread(run_dir)[1]} if diagnosis.ok else {"corrupt_file": path}
    abandon(thread_id, store=world.records, lookup=world.find_listed,
            tell_customer=lambda text: None, reason="stopped", **where)
    return choice
"""
# a broken file opened with a saver and "deleted": the evidence is edited, never moved aside
DELETES_EVEN_A_BROKEN_FILE = _RECOVER_HEAD + """    world, saver, graph = open_thread(run_dir)
    if choice is Recovery.RESUME:
        resume(graph, config_of(thread_id), store=world.records, lookup=world.find_listed)
        return choice
    abandon(thread_id, checkpointer=saver, store=world.records, lookup=world.find_listed,
            tell_customer=tell_customer, reason="stopped")
    return choice
"""

_BRANCH_HEAD = """def try_in_sandbox(saver, thread_id, values, sandbox):
    graph = keyed_graph(sandbox, saver)
"""
UPDATE_THE_HEAD = _BRANCH_HEAD + """    fork = graph.update_state(config_of(thread_id), values)
    return graph.invoke(None, fork, durability="sync")
"""
FORK_BEFORE_THE_CHARGE = _BRANCH_HEAD + """\
    past = checkpoint_before(graph, config_of(thread_id), "charge")
    return graph.invoke(None, branch(graph, past, values), durability="sync")
"""
START_OVER = _BRANCH_HEAD + """    saver.delete_thread(thread_id)
    return graph.invoke({"thread_id": thread_id, "message": "pay inv_9 for ada@example.com",
                         **values}, config_of(thread_id), durability="sync")
"""
STATE_OF_THE_FORK_CHECKPOINT = _BRANCH_HEAD + """\
    fork = branch(graph, checkpoint_before(graph, config_of(thread_id), "email"), values)
    graph.invoke(None, fork, durability="sync")
    return graph.get_state(fork).values  # the fork checkpoint itself: email has not run there
"""

_RECORD_HEAD = """from course.durable import ReplayRecord, transcript_hash
import hashlib


def step_record(step, node, model, seen, reply, results):
    calls = [{"name": c["name"], "args": c["args"]} for c in reply.tool_calls]
"""
VERSION_OF_THE_RUNNING_MODEL = _RECORD_HEAD + """\
    return ReplayRecord(step, node, model.name, model.model_version,
                        transcript_hash(seen), calls, list(results))
"""
HASH_OF_THE_LAST_MESSAGE = _RECORD_HEAD + """    version = reply.response_metadata["model_version"]
    return ReplayRecord(step, node, model.name, version, transcript_hash(seen[-1:]), calls,
                        list(results))
"""
HASH_OF_THE_REPR = _RECORD_HEAD + """    version = reply.response_metadata["model_version"]
    digest = hashlib.sha256(str(seen).encode()).hexdigest()
    return ReplayRecord(step, node, model.name, version, digest, calls, list(results))
"""

POSITION_NOT_STEP = """def first_changed_step(records):
    records = list(records)
    for i in range(1, len(records)):
        before, now = records[i - 1], records[i]
        if (before.model_name, before.model_version) != (now.model_name, now.model_version):
            return i
    return None
"""
VERSION_ONLY = """def first_changed_step(records):
    previous = None
    for record in records:
        if previous is not None and record.model_version != previous:
            return record.step
        previous = record.model_version
    return None
"""

KEYLESS_TOOLS = """def fixed_tools(world, thread_id):
    return support_tools(world, thread_id, keyed=False)
"""
THE_COURSE_KEYED_TOOLS = """def fixed_tools(world, thread_id):
    return support_tools(world, thread_id, keyed=True)
"""
REMEMBERED_IN_MEMORY = """DONE = {}


def fixed_tools(world, thread_id):
    tools = support_tools(world, thread_id, keyed=False)

    def once(name):
        def call(invoice_id):
            if (name, invoice_id) not in DONE:
                DONE[name, invoice_id] = tools[name](invoice_id=invoice_id)
            return DONE[name, invoice_id]
        return call

    return {**tools, "charge": once("charge"), "send_receipt": once("send_receipt")}
"""
KEY_WITHOUT_THE_CONVERSATION = """from course.cloudwave import receipt


def fixed_tools(world, thread_id):
    tools = support_tools(world, thread_id, keyed=False)

    def charge(invoice_id):
        found = tools["lookup_invoice"](invoice_id)
        return world.billing.charge(customer_id=found["customer_id"], invoice_id=invoice_id,
                                    cents=found["cents"], currency=found["currency"],
                                    idempotency_key=f"charge:{invoice_id}")

    def send_receipt(invoice_id):
        found = tools["lookup_invoice"](invoice_id)
        mail = receipt({**found, "intent": "charge"})
        return world.mail.send(**mail, email_id=f"receipt:{invoice_id}")

    return {**tools, "charge": charge, "send_receipt": send_receipt}
"""


def _stores(**changes: str):
    def edit(source: str) -> str:
        answer = {"ci": "InMemorySaver", "desk": "SqliteSaver", "cloud": "PostgresSaver",
                  **changes}
        return f"STORE_FOR = {answer!r}\n"
    return edit


WRONG = {
    "wrong_a": {"ex1_policy": DEBUG_FIRST, "ex2_recover": RESUME_WITHOUT_SETTLING,
                "ex3_branch": UPDATE_THE_HEAD, "ex4_record": VERSION_OF_THE_RUNNING_MODEL,
                "ex5_changed": POSITION_NOT_STEP, "ex6_fix": KEYLESS_TOOLS,
                "ex7_stores": _stores(cloud="SqliteSaver")},
    "wrong_b": {"ex1_policy": RETRIES_EVERYTHING, "ex2_recover": ABANDON_WITHOUT_SETTLING,
                "ex3_branch": FORK_BEFORE_THE_CHARGE, "ex4_record": HASH_OF_THE_LAST_MESSAGE,
                "ex5_changed": VERSION_ONLY, "ex6_fix": REMEMBERED_IN_MEMORY,
                "ex7_stores": _stores(desk="InMemorySaver")},
    "wrong_c": {"ex1_policy": ONLY_TIMEOUTS_AND_429, "ex2_recover": CUSTOMER_NEVER_TOLD,
                "ex3_branch": START_OVER, "ex4_record": HASH_OF_THE_REPR,
                "ex6_fix": KEY_WITHOUT_THE_CONVERSATION},
    "wrong_d": {"ex1_policy": HANDS_OVER_TO_THE_COURSE, "ex2_recover": DELETES_EVEN_A_BROKEN_FILE,
                "ex3_branch": STATE_OF_THE_FORK_CHECKPOINT, "ex6_fix": THE_COURSE_KEYED_TOOLS},
}
# what each mistake must cost: the failed tests, exercise by exercise
EXPECTED_FAILURES = {
    "wrong_a": {"ex1_every_branch", "ex2_resume", "ex3_fork", "ex4_record_hidden",
                "ex5_incident", "ex5_hidden", "ex6_replay", "ex6_hidden", "ex7_hidden"},
    "wrong_b": {"ex1_every_branch", "ex2_abandon", "ex3_original_untouched",
                "ex4_record_hidden", "ex5_hidden", "ex6_hidden", "ex7_hidden"},
    "wrong_c": {"ex1_every_branch", "ex2_abandon", "ex3_fork", "ex3_original_untouched",
                "ex4_record_visible", "ex4_record_hidden", "ex6_hidden"},
    "wrong_d": {"ex1_every_branch", "ex2_abandon", "ex3_fork", "ex6_hidden"},
}


def _exercise(grade_id: str) -> str:
    return grade_id.split("_")[0]


# ------------------------------------------------------------ the notebooks
@pytest.mark.parametrize("path", [SOURCE, RELEASE], ids=["solution", "release"])
def test_committed_notebooks_have_no_outputs(path):
    assert code_cells_with_outputs(path) == []


def test_every_exercise_has_visible_and_hidden_tests_with_points():
    kinds = exercises_and_test_kinds(SOURCE)
    assert sorted(kinds) == [f"Exercise {n}" for n in range(1, 8)]
    assert all(k == {True, False} for k in kinds.values()), kinds
    ids = [c.metadata["nbgrader"]["grade_id"] for c in cells(SOURCE) if "nbgrader" in c.metadata]
    assert len(ids) == len(set(ids)), "grade ids must be unique"
    assert autograded_points(SOURCE) == TOTAL
    written = [g for g in graded(SOURCE).values() if g["solution"]]
    assert [g["points"] for g in written] == [2, 2, 2]


def test_the_release_hides_solutions_hidden_tests_and_model_answers():
    text = RELEASE.read_text()
    for secret in ("BEGIN SOLUTION", "BEGIN HIDDEN TESTS", "An unknown error type is not on",
                   "keyed=True", "_reference_policy", 'idempotency_key=f"{thread_id}'):
        assert secret not in text, secret
    assert text.count("raise NotImplementedError()") == 7  # one per code answer cell
    assert graded(RELEASE).keys() == graded(SOURCE).keys()


def test_every_wrong_answer_changes_a_real_answer_cell(tmp_path):
    answers = {c.metadata["nbgrader"]["grade_id"] for c in cells(SOURCE)
               if c.metadata.get("nbgrader", {}).get("solution")
               and c.cell_type == "code"}
    for name, edits in WRONG.items():
        assert set(edits) <= answers
        wrong_answer(SOURCE, tmp_path / name, edits)  # asserts each edit changes its cell
    per_exercise: dict[str, int] = {}
    for edits in WRONG.values():
        for grade_id in edits:
            per_exercise[_exercise(grade_id)] = per_exercise.get(_exercise(grade_id), 0) + 1
    assert per_exercise == {"ex1": 4, "ex2": 4, "ex3": 4, "ex4": 3, "ex5": 2, "ex6": 4, "ex7": 2}


# ------------------------------------------------------ the nbgrader pipeline
@pytest.fixture(scope="module")
def pipeline(tmp_path_factory):
    """`make check WEEK=6` on the release in the background; here, one nbgrader run for the
    solution and every wrong submission, keeping its course folder."""
    root = tmp_path_factory.mktemp("week6-grading")
    folders = {"solution": SOURCE.parent}
    for name, edits in WRONG.items():
        folders[name] = wrong_answer(SOURCE, root / name, edits)
    before = nbgrader_state_in_repo()
    jobs = {"blank": start_make_check(6)}
    try:
        reports = grading.grade(6, folders, keep=root / "course")
    finally:
        done = finish(jobs)
    assert nbgrader_state_in_repo() == before, "grading wrote nbgrader files into the repo"
    return {"course": root / "course", **reports, **done}


@pytest.mark.slow
def test_the_committed_release_is_what_generate_assignment_makes(pipeline):
    fresh = json.loads((pipeline["course"] / "week6" / "week6.ipynb").read_text())
    assert fresh == json.loads(RELEASE.read_text()), (
        "week6/ is out of date: run `python -m course.grading --release --week 6` and commit")


@pytest.mark.slow
def test_the_solution_runs_headless_and_shows_every_demo(pipeline):
    executed = pipeline["course"] / "autograded" / "solution" / "week6" / "week6.ipynb"
    assert errors_in(executed) == []
    text = output_text(executed)
    assert "NeedsReconcile : step 'charge'" in text  # the blind resume was refused
    assert "{'charge': 'landed'}" in text  # the damaged file's charge was kept
    assert "charges after the 429: 0" in text  # the incident's 429 charged nothing
    assert "Keep the thread" not in text  # the budget demo's reason agrees with its delete
    assert "GraphRecursionError" in text and "checkpoints left: None" in text
    assert "model changed at step 3" in text and "MODEL CHANGED here" in text
    assert "effects=2 keyed=0 repeatable=2" in text
    assert "effects=2 keyed=2 repeatable=0" in text
    if "No PostgreSQL here" in text:
        assert not in_ci(), "CI must run the PostgreSQL demos, not skip them"
    else:
        assert "ledger    charges=1 emails=1" in text  # the restart drill
        assert "1 resumed, 7 in_progress_elsewhere; charges=1 emails=1" in text


@pytest.mark.slow
def test_the_solution_gets_full_marks(pipeline):
    solution = pipeline["solution"]
    assert [t.grade_id for t in solution.failed()] == []
    assert solution.summary() == f"week6: {TOTAL}/{TOTAL}"


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(WRONG))
def test_each_wrong_answer_loses_points_on_its_own_exercise(pipeline, name):
    report = pipeline[name]
    failed = {t.grade_id for t in report.failed()}
    assert failed == EXPECTED_FAILURES[name], "\n".join(report.lines())
    wronged = {_exercise(g) for g in WRONG[name]}
    assert {_exercise(g) for g in failed} == wronged  # every mistake costs, nothing else does
    assert not any(t.timed_out for t in report.failed())


@pytest.mark.slow
def test_hidden_test_messages_say_what_is_wrong(pipeline):
    said = "\n".join(line for name in WRONG for line in pipeline[name].lines())
    for words in ("is not escalated", "the charge that landed was not settled",
                  "the customer was told 0 time(s)", "the fork charged again",
                  "the version of the model running now", "not its position in the list",
                  "must outlive the process", "would not survive a deploy",
                  "calls the course's own policy", "instead of being moved aside",
                  "the state before the fork ran email", "the course's own tools"):
        assert words in said, words
    assert "BEGIN HIDDEN TESTS" not in said and "_reference_policy" not in said
    assert "_hands_over_to_the_course" not in said and "_watched_tools" not in said


@pytest.mark.slow
def test_make_check_on_the_untouched_release_prints_zero(pipeline):
    done = pipeline["blank"]
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == f"week6: 0/{TOTAL}"
