"""Week 6: the notebooks, the nbgrader pipeline and ``make check WEEK=6``.

One module-scoped pipeline (see :mod:`weeks`): ``make check WEEK=6`` on the untouched
release runs in a background process while this process grades, in ONE nbgrader run,
the solution and one known-wrong submission. The exercises do not share answers
(exercise 2's tests swap in the reference policy), so that submission carries the first
realistic mistake of every exercise, and each must cost points on its own exercise only.
All 23 wrong answers (at least two per exercise) are checked by forking one run of the
solution at their exercise (``tests/forked_answers.py``); for the graded ones the
verdicts must match nbgrader's.
"""

from __future__ import annotations

from collections import Counter

import pytest
from fixtures_pg import in_ci
from weeks import NBGRADER_WARNINGS, Wrong, executed_solution, messages_of, output_text, week_suite

pytestmark = NBGRADER_WARNINGS


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


WRONG = {  # name: Wrong(exercise, {answer cell: new source}, the tests it must fail)
    "ex1_debug_first": Wrong(1, {"ex1_policy": DEBUG_FIRST}, {"ex1_every_branch"}),
    "ex1_retries_everything": Wrong(1, {"ex1_policy": RETRIES_EVERYTHING}, {"ex1_every_branch"}),
    "ex1_only_timeouts_and_429": Wrong(1, {"ex1_policy": ONLY_TIMEOUTS_AND_429},
                                       {"ex1_every_branch"}),
    "ex1_hands_over_to_the_course": Wrong(1, {"ex1_policy": HANDS_OVER_TO_THE_COURSE},
                                          {"ex1_drill", "ex1_every_branch"}),
    "ex2_resume_without_settling": Wrong(2, {"ex2_recover": RESUME_WITHOUT_SETTLING},
                                         {"ex2_resume"}),
    "ex2_abandon_without_settling": Wrong(2, {"ex2_recover": ABANDON_WITHOUT_SETTLING},
                                          {"ex2_abandon"}),
    "ex2_customer_never_told": Wrong(2, {"ex2_recover": CUSTOMER_NEVER_TOLD}, {"ex2_abandon"}),
    "ex2_deletes_even_a_broken_file": Wrong(2, {"ex2_recover": DELETES_EVEN_A_BROKEN_FILE},
                                            {"ex2_abandon"}),
    "ex3_update_the_head": Wrong(3, {"ex3_branch": UPDATE_THE_HEAD}, {"ex3_fork"}),
    "ex3_fork_before_the_charge": Wrong(3, {"ex3_branch": FORK_BEFORE_THE_CHARGE},
                                        {"ex3_original_untouched"}),
    "ex3_start_over": Wrong(3, {"ex3_branch": START_OVER},
                            {"ex3_fork", "ex3_original_untouched"}),
    "ex3_state_of_the_fork_checkpoint": Wrong(3, {"ex3_branch": STATE_OF_THE_FORK_CHECKPOINT},
                                              {"ex3_fork"}),
    "ex4_version_of_the_running_model": Wrong(4, {"ex4_record": VERSION_OF_THE_RUNNING_MODEL},
                                              {"ex4_record_hidden"}),
    "ex4_hash_of_the_last_message": Wrong(4, {"ex4_record": HASH_OF_THE_LAST_MESSAGE},
                                          {"ex4_record_hidden"}),
    "ex4_hash_of_the_repr": Wrong(4, {"ex4_record": HASH_OF_THE_REPR},
                                  {"ex4_record_visible", "ex4_record_hidden"}),
    "ex5_position_not_step": Wrong(5, {"ex5_changed": POSITION_NOT_STEP},
                                   {"ex5_incident", "ex5_hidden"}),
    "ex5_version_only": Wrong(5, {"ex5_changed": VERSION_ONLY}, {"ex5_hidden"}),
    "ex6_keyless_tools": Wrong(6, {"ex6_fix": KEYLESS_TOOLS}, {"ex6_replay", "ex6_hidden"}),
    "ex6_remembered_in_memory": Wrong(6, {"ex6_fix": REMEMBERED_IN_MEMORY}, {"ex6_hidden"}),
    "ex6_key_without_the_conversation": Wrong(6, {"ex6_fix": KEY_WITHOUT_THE_CONVERSATION},
                                              {"ex6_hidden"}),
    "ex6_the_course_keyed_tools": Wrong(6, {"ex6_fix": THE_COURSE_KEYED_TOOLS}, {"ex6_hidden"}),
    "ex7_cloud_on_sqlite": Wrong(7, {"ex7_stores": _stores(cloud="SqliteSaver")},
                                 {"ex7_hidden"}),
    "ex7_desk_in_memory": Wrong(7, {"ex7_stores": _stores(desk="InMemorySaver")},
                                {"ex7_hidden"}),
}


globals().update(week_suite(
    week=6, exercises=7, total=45, written=[2, 2, 2], wrongs=WRONG, bundled=1,
    demos=[
        "NeedsReconcile : step 'charge'",  # the blind resume was refused
        "{'charge': 'landed'}",  # the damaged file's charge was kept
        "charges after the 429: 0",  # the incident's 429 charged nothing
        "GraphRecursionError", "checkpoints left: None",
        "model changed at step 3", "MODEL CHANGED here",
        "effects=2 keyed=0 repeatable=2",
        "effects=2 keyed=2 repeatable=0",
        # the frozen worker: unfenced, its late commit is a second charge; fenced, refused
        "unfenced provider: the resumer's reconcile said 'sent_now'; charges at the bank: 2",
        "fenced provider: the resumer's reconcile said 'sent_now'; charges at the bank: 1",
        "the frozen worker woke up to: StepSettledElsewhere",
    ],
    said={},  # see test_feedback_names_every_mistake
    secrets=["An unknown error type is not on", "keyed=True", "_reference_policy",
             'idempotency_key=f"{thread_id}'],
))


# ------------------------------------------------------------ week 6's own checks
def test_every_exercise_has_as_many_wrong_answers_as_it_had():
    """At least two per exercise; 23 in all."""
    assert Counter(w.exercise for w in WRONG.values()) == {1: 4, 2: 4, 3: 4, 4: 3, 5: 2,
                                                           6: 4, 7: 2}


@pytest.mark.slow
def test_the_solution_keeps_its_promises_and_runs_postgres_in_ci(pipeline):
    text = output_text(executed_solution(pipeline, 6))
    assert "Keep the thread" not in text  # the budget demo's reason agrees with its delete
    if "No PostgreSQL here" in text:
        assert not in_ci(), "CI must run the PostgreSQL demos, not skip them"
    else:
        assert "ledger    charges=1 emails=1" in text  # the restart drill
        assert "1 resumed, 7 in_progress_elsewhere; charges=1 emails=1" in text


@pytest.mark.slow
def test_feedback_names_every_mistake(pipeline):
    """What a student is told names each mistake: the bundled answers' feedback, and the
    messages the others' tests gave in their forked checks (worded as the feedback words
    them; the agreement test holds the two together)."""
    graded = sorted(set(pipeline["bundle_of"].values()))
    said = "\n".join([line for bundle in graded for line in pipeline["reports"][bundle].lines()]
                     + [message for name in WRONG if name not in pipeline["bundle_of"]
                        for message in messages_of(pipeline, name, WRONG)])
    for words in ("is not escalated", "the charge that landed was not settled",
                  "the customer was told 0 time(s)", "the fork charged again",
                  "the version of the model running now", "not its position in the list",
                  "must outlive the process", "would not survive a deploy",
                  "calls the course's own policy", "instead of being moved aside",
                  "the state before the fork ran email", "the course's own tools"):
        assert words in said, words
    assert "BEGIN HIDDEN TESTS" not in said and "_reference_policy" not in said
    assert "_hands_over_to_the_course" not in said and "_watched_tools" not in said
