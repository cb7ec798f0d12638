"""Week 4 (wait for a human): the notebooks, the nbgrader pipeline and ``make check WEEK=4``.

The same shape as week 3's module: one nbgrader run grades the solution and the known-wrong
answers (several to a submission, one per exercise) while ``make check WEEK=4`` grades the
untouched release in the background. Exercise 3 asks for a test, so its wrong answers are
tests that are too weak: they pass graphs that are broken.
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
    "ex3_checks_only_the_refund_count": Wrong(3, {"ex3_check": replacing(
        CHECKS, "    assert result.refunds == 1\n")},
        {"ex3_hidden"}),
    "ex3_checks_the_kill_and_that_a_refund_happened": Wrong(3, {"ex3_check": replacing(
        CHECKS, '    assert result.first_ended == "SIGKILL" and result.refunds >= 1\n')},
        {"ex3_hidden"}),
}


globals().update(week_suite(
    week=4, exercises=3, total=TOTAL, written=[2, 2, 2], wrongs=WRONG,
    demos=[
        "(no answer: caught GraphInterrupt)",
        "a replay from before approve asks again: True",
        "ended with SIGKILL; refunds while paused: 0",
        "resumed and ended with exit 0; refunds now: 1",
        "'being reviewed' mails: 2",
        "{'answers': [('refund', 'manager says yes')]}",
        "webhooks delivered: 1",
    ],
    said={
        "ex1_ignores_the_answer":
            "the person said no, yet a refund or a mail went out",
        "ex1_asks_a_bare_question":
            "the person is not shown what the approval lets happen",
        "ex2_one_key_for_everyone":
            "each conversation needs exactly one",
        "ex3_checks_only_the_refund_count":
            "check_restart passed a graph that never waits",
        "ex3_checks_the_kill_and_that_a_refund_happened":
            "check_restart passed a graph that refunds before the approval",
    },
    secrets=[":approval_needed", "_pays_twice", "Two rows for one approval"],
))
