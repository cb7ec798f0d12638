"""Week 4 (wait for a human): the notebooks, the nbgrader pipeline and ``make check WEEK=4``.

The same shape as week 3's module: one nbgrader run grades the solution and one known-wrong
answer per exercise (all in one submission), one forked run of the
solution checks them all, and ``make check WEEK=4`` grades the untouched release in the
background. Exercise 3 asks for a test, so its wrong answers are
tests that are too weak: they pass graphs that are broken.

Several wrong answers come from a fresh student's review: the course's reference node
handed the work for exercise 1, a heads-up sent after ``interrupt()`` (too late), one
remembered in the kernel's memory (lost with the process, so two across a real restart) or
sent for every refund, and restart checks that skip the decision, accept two refunds or
crash with a ``KeyError`` on a lost run.
"""

from __future__ import annotations

from weeks import NBGRADER_WARNINGS, Wrong, replacing, week_suite

TOTAL = 19
pytestmark = NBGRADER_WARNINGS


THRESHOLD = '''    if state["cents"] <= APPROVAL_THRESHOLD_CENTS:
        decision = {"approved": True, "reason": "under the approval threshold"}
        return {"approved": True, "decision": decision, "log": ["approve"]}
'''
DECISION = 'decision = {"approved": bool(answer["approved"]), "reason": answer.get("reason", "")}'
KEY = 'email_id=f"{state[\'thread_id\']}:approval_needed")'
DECISION_CHECK = ('    assert result.final.get("decision", {}).get("approved") is True, '
                  '"the approval was lost"\n')
OWN_NODE = '''def approve(state, world):
    """Refunds over the threshold wait for a person; the decision goes into the state."""
    return ask_a_person(state, world)
'''
RENAMED_NODE = '''from course.cloudwave.approval import ask_a_person as decide


def approve(state, world):
    """Refunds over the threshold wait for a person; the decision goes into the state."""
    return decide(state, world)
'''
HEADS_UP_AFTER = '''def approve_with_heads_up(state, world):
    """Tell the approvals desk once, then wait for the person."""
    update = ask_a_person(state, world)  # the mail goes out once the answer is in
    if state["cents"] > APPROVAL_THRESHOLD_CENTS:
        world.mail.send(**approval_notice(state))
    return update
'''
HEADS_UP_REMEMBERED = '''_told = set()  # the conversations the desk has heard about


def approve_with_heads_up(state, world):
    """Tell the approvals desk once, then wait for the person."""
    seen = (id(world), state["thread_id"])
    if state["cents"] > APPROVAL_THRESHOLD_CENTS and seen not in _told:
        _told.add(seen)
        world.mail.send(**approval_notice(state))
    return ask_a_person(state, world)
'''
HEADS_UP_ALWAYS = '''def approve_with_heads_up(state, world):
    """Tell the approvals desk once, then wait for the person."""
    world.mail.send(**approval_notice(state), email_id=f"{state['thread_id']}:approval_needed")
    return ask_a_person(state, world)
'''
CHECKS = '''    assert result.paused and result.first_ended == "SIGKILL", (
        f"the first process did not pause and die: it ended with {result.first_ended}")
    assert result.refunds_while_paused == 0, "money moved before anyone approved"
    assert result.refunds == 1, f"{result.refunds} refunds after the approval, not 1"
    assert result.final.get("decision", {}).get("approved") is True, "the approval was lost"
'''

# name (its exercise first): Wrong(exercise, the cells it changes, the tests it must fail)
WRONG = {
    "ex1_asks_for_every_refund": Wrong(1, {"ex1_approve": replacing(THRESHOLD, "")},
        {"ex1_visible", "ex1_hidden"}),
    "ex1_ignores_the_answer": Wrong(1, {"ex1_approve": replacing(
        DECISION, 'decision = {"approved": True, "reason": answer.get("reason", "")}')},
        {"ex1_hidden"}),  # the visible test only approves
    "ex1_drops_the_reason": Wrong(1, {"ex1_approve": replacing(
        DECISION, 'decision = {"approved": bool(answer["approved"])}')},
        {"ex1_visible", "ex1_hidden"}),
    "ex1_asks_a_bare_question": Wrong(1, {"ex1_approve": replacing(
        "interrupt(approval_request(state))", 'interrupt("Approve this refund?")')},
        {"ex1_hidden"}),
    # the course's own node, under its name or another (found by a fresh student)
    "ex1_hands_over_to_the_reference": Wrong(1, {"ex1_approve": OWN_NODE},
                                             {"ex1_visible", "ex1_hidden"}),
    # "not more than" read as "less than"
    "ex1_strict_threshold": Wrong(1, {"ex1_approve": replacing(
        'if state["cents"] <= APPROVAL_THRESHOLD_CENTS:',
        'if state["cents"] < APPROVAL_THRESHOLD_CENTS:')}, {"ex1_hidden"}),
    "ex1_renamed_reference": Wrong(1, {"ex1_approve": RENAMED_NODE},
                                   {"ex1_visible", "ex1_hidden"}),
    "ex2_heads_up_before_interrupt": Wrong(2, {"ex2_heads_up": replacing(
        "world.mail.send(**approval_notice(state),\n                        " + KEY,
        "world.mail.send(**approval_notice(state))")},
        {"ex2_visible", "ex2_hidden"}),
    "ex2_key_from_the_clock": Wrong(2, {"ex2_heads_up": replacing(
        KEY, 'email_id=f"{state[\'thread_id\']}:{__import__(\'time\').time_ns()}")')},
        {"ex2_visible", "ex2_hidden"}),
    "ex2_one_key_for_everyone": Wrong(2, {"ex2_heads_up": replacing(
        KEY, 'email_id="approval_needed")')},
        {"ex2_hidden"}),  # one conversation cannot show it
    # fix 1 of the lesson: sent once, but only after the decision
    "ex2_heads_up_after_interrupt": Wrong(2, {"ex2_heads_up": HEADS_UP_AFTER},
        {"ex2_visible", "ex2_hidden"}),
    # once per kernel, not once per conversation: two across a real restart
    "ex2_remembered_in_memory": Wrong(2, {"ex2_heads_up": HEADS_UP_REMEMBERED},
        {"ex2_hidden"}),
    "ex2_heads_up_for_every_refund": Wrong(2, {"ex2_heads_up": HEADS_UP_ALWAYS},
        {"ex2_hidden"}),
    "ex3_checks_only_the_refund_count": Wrong(3, {"ex3_check": replacing(
        CHECKS, "    assert result.refunds == 1\n")},
        {"ex3_hidden"}),
    "ex3_checks_the_kill_and_that_a_refund_happened": Wrong(3, {"ex3_check": replacing(
        CHECKS, '    assert result.first_ended == "SIGKILL" and result.refunds >= 1\n')},
        {"ex3_hidden"}),
    "ex3_no_decision_check": Wrong(3, {"ex3_check": replacing(DECISION_CHECK, "")},
        {"ex3_hidden"}),
    "ex3_at_least_one_refund": Wrong(3, {"ex3_check": replacing(
        "result.refunds == 1", "result.refunds >= 1")}, {"ex3_hidden"}),
    # indexes a final state that is {} when the resume did not run (the decision checked
    # before the refunds, so nothing stops it first)
    "ex3_indexes_the_final_state": Wrong(3, {"ex3_check": replacing(CHECKS, """\
    assert result.paused and result.first_ended == "SIGKILL"
    assert result.refunds_while_paused == 0
    assert result.final["decision"]["approved"] is True
    assert result.refunds == 1
""")}, {"ex3_visible", "ex3_hidden"}),
    "ex3_any_decision_will_do": Wrong(3, {"ex3_check": replacing(
        DECISION_CHECK, '    assert result.final.get("decision"), "the approval was lost"\n')},
        {"ex3_hidden"}),
}


globals().update(week_suite(
    week=4, exercises=3, total=TOTAL, written=[2, 2, 2], wrongs=WRONG, bundled=1,
    demos=[
        "(no answer: caught GraphInterrupt)",
        "'will_send': ['refund 129.00 EUR', 'mail to marta@example.com']}",
        "the new process ended with exit 4: no checkpoint for thread 't-restart'",
        "the node ran 3 times for two questions",
        "answered no at the breakpoint: ['parse', 'retrieve', 'refund', 'email'] | refunds: 1",
        "two posts with the same key, deliveries: 2",
        "webhooks while waiting: 0",
        "webhooks delivered: 2 | refunds: 1",
        "a replay from before approve asks again: True",
        "ended with SIGKILL; refunds while paused: 0",
        "resumed and ended with exit 0; refunds now: 1",
        "'being reviewed' mails: 2",
        "{'answers': [('refund', 'manager says yes')]}",
        "webhooks delivered: 1",
    ],
    said={
        "ex1_ignores_the_answer":
            "the person said no, yet a refund, a mail or a webhook went out",
        "ex1_hands_over_to_the_reference":
            "approve hands the work to the course's ask_a_person",
        "ex1_renamed_reference":
            "approve hands the work to the course's ask_a_person",
        "ex1_strict_threshold":
            "a refund of exactly the threshold (50.00) waited for a person",
        "ex2_heads_up_after_interrupt":
            "no heads-up has reached the approvals desk",
        "ex2_remembered_in_memory":
            "the answer came from a new process: the approvals desk got 2 heads-up mails",
        "ex2_heads_up_for_every_refund":
            "under the threshold: it never waits) sent the approvals desk a heads-up",
        "ex1_asks_a_bare_question":
            "the person is not shown what the approval lets happen",
        "ex2_one_key_for_everyone":
            "it was taken for a repeat of the first one's",
        "ex3_checks_only_the_refund_count":
            "check_restart passed a graph that never waits",
        "ex3_checks_the_kill_and_that_a_refund_happened":
            "check_restart passed a graph that refunds before the approval",
        "ex3_no_decision_check":
            "check_restart passed a graph that refunds without recording the person's decision",
        "ex3_at_least_one_refund":
            "check_restart passed a graph that refunds twice after the approval",
        "ex3_indexes_the_final_state":
            "check_restart crashed with KeyError('decision') instead of failing",
        "ex3_any_decision_will_do":
            "check_restart passed a graph that refunds while its recorded decision is a no",
    },
    secrets=[":approval_needed", "_pays_twice", "_runs_the_reference", "_ignoring_the_answer",
             "Two rows for one approval"],
))
