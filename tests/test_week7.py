"""Week 7 (capstone): the notebooks, the nbgrader pipeline, known-wrong answers, ``make check``.

The shared suite (``tests/weeks.py``'s ``week_suite``): one module-scoped ``pipeline`` runs
``make check WEEK=7`` on the untouched release in a background process while this process grades the
solution and the first known-wrong answer of each exercise in ONE nbgrader run, keeping
its course folder.

That submission is the solution with realistic mistakes, one per exercise (bundled by
the suite), and each mistake must lose points on its own exercise and nowhere else. Every
wrong answer, and every right answer written differently from the solution (another way of
settling a booking in flight, another key form), is checked by forking one run of the
solution at its exercise (``tests/forked_answers.py``): a wrong one fails exactly its tests,
a right one passes them all, and for the graded ones the verdicts must match nbgrader's.
"""

from __future__ import annotations

import pytest
from weeks import NBGRADER_WARNINGS, Right, Wrong, executed_solution, output_text, week_suite

pytestmark = NBGRADER_WARNINGS

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

LIBRARY_BOOK_ONCE = '''
from course.travel import book_once


def book_marta_once(world, trip_id, flight_id):
    """The course's own guarded booking, under the exercise's name."""
    return book_once(world, trip_id, flight_id)
'''

AIRLINE_KEY_ONLY = '''
from course.durable import idem_key


def book_marta_once(world, trip_id, flight_id):
    """A stable key the airline deduplicates on, and no record of our own."""
    args = {"customer_id": "cus_marta", "flight_id": flight_id}
    return world.airline.book(**args, idempotency_key=idem_key(trip_id, "book_flight", args))
'''

FIRE = '''
    def fire(*, customer_id, flight_id, idem_key):
        return world.airline.book(customer_id=customer_id, flight_id=flight_id,
                                  idempotency_key=idem_key)

    args = {"customer_id": "cus_marta", "flight_id": flight_id}'''

LOOKUP_BY_KEY = '''
from course.durable import NeedsReconcile, guarded, reconcile


def book_marta_once(world, trip_id, flight_id):
    """Settles a booking in flight by looking its key up (as week 7 once taught)."""''' + FIRE + '''
    try:
        return guarded(trip_id, "book_flight", fire, args, store=world.records)
    except NeedsReconcile:
        reconcile(trip_id, "book_flight", store=world.records,
                  lookup=world.airline.find_by_key)
        return guarded(trip_id, "book_flight", fire, args, store=world.records)
'''

SALTED_SESSION = '''
import uuid

from course.durable import NeedsReconcile, guarded, reconcile

DEPLOYMENT = uuid.uuid4().hex[:8]  # one per running process


def book_marta_once(world, trip_id, flight_id):
    """Guarded and settled by re-sending, but the guard's session names the process."""
    session = f"{trip_id}:{DEPLOYMENT}"''' + FIRE + '''
    try:
        return guarded(session, "book_flight", fire, args, store=world.records)
    except NeedsReconcile:
        reconcile(session, "book_flight", fire, store=world.records)
        return guarded(session, "book_flight", fire, args, store=world.records)
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

COURSE_KEYED_GRAPH = '''
from course.cloudwave import keyed_graph


def build_my_graph(world, checkpointer):
    """The course's keyed graph, under the exercise's name."""
    return keyed_graph(world, checkpointer)
'''

EMAIL_ID_PER_CALL = '''
import uuid

from course.cloudwave import receipt
from course.durable import readable_key
''' + KEYED_CHARGE + '''

def my_email(state, world):
    mail = receipt(state)
    email_id = readable_key(state["thread_id"], mail["template"], str(uuid.uuid4()))
    return {"email": world.mail.send(**mail, email_id=email_id), "log": ["email"]}


def build_my_graph(world, checkpointer):
    """Every write carries a key, but the receipt's is new on every call."""
    nodes = {"parse": parse, "retrieve": retrieve, "charge": my_charge, "email": my_email}
    return build_graph(nodes, world=world, checkpointer=checkpointer)
'''

WRONG = {  # name: Wrong(exercise, {answer cell: new source}, the tests it must fail)
    "ex1_naive_booking": Wrong(1, {"ex1_book_once": NAIVE_BOOKING}, {
        "ex1_twice_in_one_process", "ex1_deep_agents_kill", "ex1_claude_sdk_kill",
        "ex1_new_process"}),
    "ex1_guard_without_reconcile": Wrong(1, {"ex1_book_once": GUARD_WITHOUT_RECONCILE}, {
        "ex1_twice_in_one_process", "ex1_deep_agents_kill"}),
    "ex1_key_with_the_pid": Wrong(1, {"ex1_book_once": KEY_WITH_THE_PID}, {
        "ex1_twice_in_one_process", "ex1_deep_agents_kill", "ex1_claude_sdk_kill",
        "ex1_new_process"}),
    # the course's book_once does the work (the fresh reader's 30/30): every test of the
    # exercise fails (course/grading/references.py)
    "ex1_library_book_once": Wrong(1, {"ex1_book_once": LIBRARY_BOOK_ONCE}, {
        "ex1_twice_in_one_process", "ex1_deep_agents_kill", "ex1_claude_sdk_kill",
        "ex1_new_process"}),
    # the airline's key alone: right until the airline forgets the key (24 h)
    "ex1_airline_key_only": Wrong(1, {"ex1_book_once": AIRLINE_KEY_ONLY},
                                  {"ex1_twice_in_one_process"}),
    # settled through the simulator's find_by_key, which a real airline does not have
    "ex1_lookup_by_key": Wrong(1, {"ex1_book_once": LOOKUP_BY_KEY},
                               {"ex1_twice_in_one_process"}),
    # a per-process salt survives forks from the kernel, not a new interpreter
    "ex1_salted_session": Wrong(1, {"ex1_book_once": SALTED_SESSION}, {"ex1_new_process"}),
    "ex2_resume_with_continue": Wrong(2, {"ex2_resume": RESUME_WITH_CONTINUE},
                                      {"ex2_pending_call_kept"}),
    "ex2_resume_on_a_new_thread": Wrong(2, {"ex2_resume": RESUME_ON_A_NEW_THREAD},
                                        {"ex2_thread_finished", "ex2_pending_call_kept"}),
    "ex3_branch_without_fork": Wrong(3, {"ex3_branch": BRANCH_WITHOUT_FORK},
                                     {"ex3_new_session", "ex3_branch_has_history"}),
    "ex3_branch_as_a_new_session": Wrong(3, {"ex3_branch": BRANCH_AS_A_NEW_SESSION},
                                         {"ex3_branch_has_history"}),
    "ex4_framework_does_it_all": Wrong(4, {"ex4_table": FRAMEWORK_DOES_IT_ALL},
                                       {"ex4_row1", "ex4_row2", "ex4_row3", "ex4_row5"}),
    "ex4_guard_for_everything": Wrong(4, {"ex4_table": GUARD_FOR_EVERYTHING},
                                      {"ex4_row2", "ex4_row3", "ex4_row4"}),
    "ex5_email_left_unkeyed": Wrong(5, {"ex5_graph": EMAIL_LEFT_UNKEYED}, {"ex5_clean_audit"}),
    "ex5_email_node_removed": Wrong(5, {"ex5_graph": EMAIL_NODE_REMOVED},
                                    {"ex5_still_does_the_job"}),
    "ex5_charge_key_per_call": Wrong(5, {"ex5_graph": CHARGE_KEY_PER_CALL},
                                     {"ex5_clean_audit"}),
    # the course's keyed graph instead of the student's own nodes (the fresh reader's 30/30)
    "ex5_course_keyed_graph": Wrong(5, {"ex5_graph": COURSE_KEYED_GRAPH}, {"ex5_clean_audit"}),
    # one bug, one lost test: the hidden test asks only that the graph still does its job
    "ex5_email_id_per_call": Wrong(5, {"ex5_graph": EMAIL_ID_PER_CALL}, {"ex5_clean_audit"}),
}

# ------------------------------------------------------------------ right answers
RESEND_LIKE_WEEK_5 = '''
from course.durable import NeedsReconcile, guarded, reconcile


def book_marta_once(world, trip_id, flight_id):
    """Book Marta on flight_id at most once for trip_id; return the booking."""
    args = {"customer_id": "cus_marta", "flight_id": flight_id}

    def book(*, customer_id, flight_id, idem_key):
        return world.airline.book(customer_id=customer_id, flight_id=flight_id,
                                  idempotency_key=idem_key)

    try:
        return guarded(trip_id, "book_flight", book, args, store=world.records)
    except NeedsReconcile:
        reconcile(trip_id, "book_flight", book, store=world.records)  # week 5: resend same key
        return guarded(trip_id, "book_flight", book, args, store=world.records)
'''

OTHER_STEP_RESENT_BY_HAND = '''
from course.durable import NeedsReconcile, guarded, record_id


def book_marta_once(world, trip_id, flight_id):
    """Another step name and arguments; a booking in flight re-sent by hand, as in week 5."""
    def book(*, flight_id, idem_key):
        return world.airline.book(customer_id="cus_marta", flight_id=flight_id,
                                  idempotency_key=idem_key)

    try:
        return guarded(trip_id, "book", book, {"flight_id": flight_id}, store=world.records)
    except NeedsReconcile as pending:  # the same request, under the key it was first sent with
        answer = book(flight_id=flight_id, idem_key=pending.idem_key)
        world.records.record_result(record_id(trip_id, "book"), answer)
        return answer
'''

HASHED_EMAIL_ID = '''
from course.cloudwave import receipt
from course.durable import guarded
from course.durable import idem_key as fingerprint


def build_my_graph(world, checkpointer):
    """My own nodes; the receipt's email id is a hash, not a readable key."""
    def charge(state, world):
        args = {"customer_id": state["customer_id"], "invoice_id": state["invoice_id"],
                "cents": state["cents"], "currency": state["currency"]}

        def capture(idem_key, **kwargs):
            return world.billing.charge(**kwargs, idempotency_key=idem_key)

        return {"charge": guarded(state["thread_id"], "charge", capture, args,
                                  store=world.records), "log": ["charge"]}

    def email(state, world):
        mail = receipt(state)
        email_id = fingerprint(state["thread_id"], "email",
                               {"template": mail["template"], "invoice_id": state["invoice_id"]})
        return {"email": world.mail.send(**mail, email_id=email_id), "log": ["email"]}

    nodes = {"parse": parse, "retrieve": retrieve, "charge": charge, "email": email}
    return build_graph(nodes, world=world, checkpointer=checkpointer)
'''

RIGHT = {  # name: Right(exercise, {answer cell: new source}): each must get full marks
    # the fresh reader's answer: reconcile(..., fn), which the old visible test failed
    "ex1_resend_like_week_5": Right(1, {"ex1_book_once": RESEND_LIKE_WEEK_5}),
    # step "book", args {"flight_id"}: failed before with a misleading message
    "ex1_other_step_resent_by_hand": Right(1, {"ex1_book_once": OTHER_STEP_RESENT_BY_HAND}),
    "ex5_hashed_email_id": Right(5, {"ex5_graph": HASHED_EMAIL_ID}),
}


globals().update(week_suite(
    week=7, exercises=5, total=30, written=[2, 2, 2], wrongs=WRONG, rights=RIGHT, bundled=1,
    timeout_s=1200,
    demos=[
        "naive tool, killed after booking, resumed: 2 booking(s)",
        '"currency": "eur", "replayed": true}',
        "the airline's key alone, called again 25 h later: 2 booking(s)",
        "book_once (guard + key), called again 25 h later: 1 booking(s)",
        "guarded tool, killed after booking, resumed: 1 booking(s)",
        "book_naive + 'Continue': cancelled calls ['book_flight']",
        "book_once + 'Continue': cancelled calls ['book_flight'], book_flight "
        "answered 2x, 1 booking(s)",
        "book_naive: transcript ended at ('assistant', 'call book_flight'); after "
        "resume 2 booking(s)",
        "book_once: transcript ended at ('assistant', 'call book_flight'); after "
        "resume 1 booking(s)",
        "the resume's first entry: ('user', \"Continue Marta's booking.\")",
        "original transcript unchanged: True",
        "resume after the restart: No conversation found with session ID",
        "fresh session after the restart: 1 booking(s)",
        "model_version in the checkpoint metadata: False",
        "refused: session_store cannot be combined with enable_file_checkpointing",
        "effects=2 keyed=0 repeatable=2",
        "effects=2 keyed=2 repeatable=0",
    ],
    said={
        "ex1_naive_booking":
            "Deep Agents, killed after booking and resumed in a new process: 2 bookings",
        "ex2_resume_with_continue": "the pending book_flight call was cancelled",
        "ex3_branch_without_fork": "the original conversation changed",
        "ex1_guard_without_reconcile":
            "did book_marta_once raise instead of settling the booking",
        "ex2_resume_on_a_new_thread": "the crashed thread was not resumed",
        "ex5_email_node_removed": "the graph's writes are [('charge', 'billing.charge')]: "
                                  "nothing emails the receipt in 'email'",
        "ex1_key_with_the_pid": "the booking the killed process left in flight was booked again",
        "ex5_charge_key_per_call": "side effect(s) can be repeated by a crash",
        "ex1_library_book_once": "book_marta_once calls the course's book_once",
        "ex1_airline_key_only": "called again 25 hours later, after the airline forgot the key",
        "ex1_lookup_by_key": "looked the key up with find_by_key",
        "ex1_salted_session": "a brand-new Python process, running your code again from its "
                              "source, booked the same trip again",
        "ex5_course_keyed_graph": "your graph runs the course's charge_keyed, email_keyed",
        "ex5_email_id_per_call": "1 side effect(s) can be repeated by a crash",
    },
    secrets=["_DiesAfter", "fork_session=True).session_id", "patch middleware answers",
             '("none", "recovery policy")', "in_fresh_interpreter", "_book_in_a_new_process"],
))


# ------------------------------------------------------------ week 7's own checks
@pytest.mark.slow
def test_the_solution_shows_the_postgres_demo_or_why_not(pipeline):
    text = output_text(executed_solution(pipeline, 7))
    assert ("PostgresSaver, guarded tool, killed and resumed: 1 booking(s)" in text
            or "PostgreSQL could not start here" in text)
