"""Week 3 (checkpoints): the notebooks, the nbgrader pipeline and ``make check WEEK=3``.

The tests are ``tests/weeks.py``'s ``week_suite`` (shared with week 4): one
module-scoped pipeline runs ``make check WEEK=3`` on the untouched release in the
background while ONE nbgrader run grades the solution and the first known-wrong
answer of each exercise, keeping its course folder (its regenerated release and executed
solution are checked too). Those are packed one per exercise into one submission, which is
sound because no exercise's tests use another exercise's answers (checked); each one must
lose points on its own exercise and only there. Every wrong answer is also checked by forking
one run of the solution at its exercise (``tests/forked_answers.py``), and for the graded
ones the verdicts must match nbgrader's.
"""

from __future__ import annotations

import re

import pytest
from weeks import NBGRADER_WARNINGS, Wrong, cells, replacing, source_of, week_suite

TOTAL = 21
pytestmark = NBGRADER_WARNINGS


RESUME = "return graph.invoke(None, config_of(thread_id))"
FIND = '''    for snapshot in graph.get_state_history(config):
        if node in snapshot.next:
            return snapshot.config
    return None'''
FORK = '''    forked = graph.update_state(past_config, {"refund_cents": cents})
    return graph.invoke(None, forked)'''
MODES = '{"A": "sync", "B": "async", "C": "exit"}'

EX1_ALL = {"ex1_refund_fails_then_resumes", "ex1_hidden", "ex1_hidden_finished"}
# name (its exercise first): Wrong(exercise, the cells it changes, the tests it must fail).
# "A fresh student's answer": written by a reader who never saw the solutions.
WRONG = {
    # the course's own implementations, called instead of written (course/grading/references.py)
    "ex1_calls_the_courses_resume": Wrong(1, {"ex1_resume": lambda old: old + (
        "\n\nfrom course.durable import resume as _resume\n\n\n"
        "def resume(graph, thread_id):\n    return _resume(graph, config_of(thread_id))\n")},
        EX1_ALL),
    "ex2_calls_the_courses_checkpoint_before": Wrong(2, {"ex2_checkpoint_before": (
        "from course.durable import checkpoint_before as _before\n\n\n"
        "def checkpoint_before(graph, config, node):\n    try:\n"
        "        return _before(graph, config, node)\n    except ValueError:\n"
        "        return None\n")},
        {"ex2_visible", "ex2_hidden_fork", "ex2_hidden_first", "ex2_hidden_never"}),
    "ex3_calls_the_courses_branch": Wrong(3, {"ex3_fork": (
        "from course.durable import branch\n\n\n"
        "def fork_with_amount(graph, past_config, cents):\n"
        "    return graph.invoke(None, branch(graph, past_config, {'refund_cents': cents}))\n")},
        {"ex3_visible", "ex3_hidden_original", "ex3_hidden_branch"}),
    "ex1_resend_saved_values": Wrong(1, {"ex1_resume": replacing(
        RESUME, "config = config_of(thread_id)\n"
                "    return graph.invoke(graph.get_state(config).values, config)")},
        EX1_ALL),
    "ex1_no_checkpointer": Wrong(1, {"ex1_resume": replacing(
        "world=world, checkpointer=InMemorySaver())", "world=world)")},
        EX1_ALL),
    "ex1_new_thread_id": Wrong(1, {"ex1_resume": replacing(
        RESUME, 'return graph.invoke(None, config_of(thread_id + "-retry"))')},
        EX1_ALL),
    # a fresh student's answer: "a finished thread has nothing to resume"
    "ex1_none_when_finished": Wrong(1, {"ex1_resume": replacing(RESUME, """\
config = config_of(thread_id)
    if not graph.get_state(config).next:
        return None
    return graph.invoke(None, config)""")},
        {"ex1_hidden_finished"}),
    "ex2_checkpoint_where_the_node_ran": Wrong(2, {"ex2_checkpoint_before": replacing(FIND, '''\
    for snapshot in graph.get_state_history(config):
        if snapshot.values.get("log", [])[-1:] == [node]:
            return snapshot.config
    return None''')},
        {"ex2_visible", "ex2_hidden_fork", "ex2_hidden_first"}),
    "ex2_oldest_match": Wrong(2, {"ex2_checkpoint_before": replacing(
        "for snapshot in graph.get_state_history(config):",
        "for snapshot in reversed(list(graph.get_state_history(config))):")},
        {"ex2_hidden_fork"}),
    # a fresh student's answer: StopIteration for a node that never ran
    "ex2_next_without_default": Wrong(2, {"ex2_checkpoint_before": replacing(FIND, '''\
    return next(s.config for s in graph.get_state_history(config) if s.next == (node,))''')},
        {"ex2_hidden_never"}),
    "ex2_returns_the_snapshot": Wrong(2, {"ex2_checkpoint_before": replacing(
        "            return snapshot.config", "            return snapshot")},
        {"ex2_visible", "ex2_hidden_fork", "ex2_hidden_first"}),
    "ex3_replay_without_update": Wrong(3, {"ex3_fork": replacing(
        FORK, "    return graph.invoke(None, past_config)")},
        {"ex3_visible", "ex3_hidden_branch"}),
    "ex3_continue_from_the_old_config": Wrong(3, {"ex3_fork": replacing(
        "return graph.invoke(None, forked)", "return graph.invoke(None, past_config)")},
        {"ex3_visible", "ex3_hidden_branch"}),
    "ex3_update_the_latest_checkpoint": Wrong(3, {"ex3_fork": replacing(FORK, '''\
    latest = config_of(past_config["configurable"]["thread_id"])
    forked = graph.update_state(latest, {"refund_cents": cents})
    return graph.invoke(None, forked)''')},
        {"ex3_visible", "ex3_hidden_branch"}),
    "ex3_start_the_thread_over": Wrong(3, {"ex3_fork": replacing(FORK, '''\
    thread_id = past_config["configurable"]["thread_id"]
    message = graph.get_state(past_config).values["message"]
    graph.checkpointer.delete_thread(thread_id)
    return graph.invoke({"thread_id": thread_id, "message": message, "refund_cents": cents},
                        config_of(thread_id))''')},
        {"ex3_hidden_original", "ex3_hidden_branch"}),  # visible passes: only history shows it
    # a fresh student's answer: new input on the old checkpoint; parse and retrieve run again
    "ex3_new_input_on_old_checkpoint": Wrong(3, {"ex3_fork": replacing(
        FORK, '    return graph.invoke({"refund_cents": cents}, past_config)')},
        {"ex3_hidden_branch"}),  # visible passes: the sandbox does refund the new amount
    "ex4_sync_everywhere": Wrong(4, {"ex4_modes": replacing(
        MODES, '{"A": "sync", "B": "sync", "C": "sync"}')},
        {"ex4_hidden_b", "ex4_hidden_c"}),
    "ex4_async_and_exit_swapped": Wrong(4, {"ex4_modes": replacing(
        MODES, '{"A": "sync", "B": "exit", "C": "async"}')},
        {"ex4_hidden_b", "ex4_hidden_c"}),
    # a fresh student's answer: nothing kept mid-run for the read-only triage
    "ex4_exit_for_b": Wrong(4, {"ex4_modes": replacing(
        MODES, '{"A": "sync", "B": "exit", "C": "exit"}')},
        {"ex4_hidden_b"}),
    "ex4_default_everywhere": Wrong(4, {"ex4_modes": replacing(
        MODES, '{"A": "async", "B": "async", "C": "async"}')},
        {"ex4_hidden_a", "ex4_hidden_c"}),
}


globals().update(week_suite(
    week=3, exercises=4, total=TOTAL, written=[2, 2, 2], wrongs=WRONG, bundled=1,
    demos=[
        "runs in all: {'parse': 1, 'retrieve': 1, 'refund': 2, 'email': 1}",
        "it returned the final state again: True",
        "a new saver sees next = ('refund',)",
        "sending the message again ran: {'parse': 2, 'retrieve': 2",
        "exit   1                  parse 1, retrieve 1, refund 2, email 1",
        "the fork refunded 1500 cents in the sandbox",
        "the thread's current state now holds the refund of 1500 cents",
        "'body': 2, 'look_up': 1, 'give_back': 2",
        "re_000002  inv_11      4000",
    ],
    said={
        "ex1_resend_saved_values":
            "the resume ran nodes that had already finished",
        "ex1_none_when_finished":
            "resuming a thread that had already finished returned None",
        "ex2_oldest_match":
            "the one returned is not the most recent",
        "ex2_next_without_default":
            "for a node that never ran (cancel), checkpoint_before raised StopIteration",
        "ex2_returns_the_snapshot":
            "return snapshot.config, not the snapshot",
        "ex3_start_the_thread_over":
            "checkpoint(s) of the original run are gone",
        "ex3_new_input_on_old_checkpoint":
            "the fork ran parse and retrieve again",
        "ex3_replay_without_update":
            "the branch's first checkpoint has source 'fork'",
        "ex4_sync_everywhere":
            "B: the mode chosen for B does not fit",
        "ex4_exit_for_b":
            "B: the mode chosen for B does not fit",
    },
    secrets=['"B": "async"', "checkpoint(s) of the original run are gone",
             "for a node that never ran, return None", "is not an edit of the",
             "All of them: the resume"],
))


def test_exercise_4_messages_name_no_mode():
    """Each situation of exercise 4 has its own hidden test, whose message restates the
    situation and names no mode: "waits on every write or keeps nothing mid-run" ruled out
    two of the three and handed over the third."""
    messages = [cell.source.split("### BEGIN HIDDEN TESTS", 1)[1] for cell in cells(source_of(3))
                if cell.metadata.get("nbgrader", {}).get("grade_id", "").startswith("ex4_hidden")]
    assert len(messages) == 3
    for message in messages:
        said = " ".join(re.findall(r'^\s+"(.*)"\)?$', message, re.M))
        assert said and not re.search(r"\b(sync|async|exit)\b", said), said


@pytest.mark.slow
def test_the_blank_release_is_told_each_exercise_is_not_done_yet(pipeline):
    """A hidden test that turns the student's exceptions into messages lets the blank
    answer's NotImplementedError through: "raised NotImplementedError; return None" would
    blame an answer nobody wrote yet."""
    said = [line.strip() for line in pipeline["blank"].stdout.splitlines()
            if line.startswith("      ")]
    assert len(said) == 14, said
    assert all(line.startswith(("NotImplementedError: the exercise is not done yet",
                                "NameError: name 'MODES' is not defined")) for line in said), said
