"""Week 3 (checkpoints): the notebooks, the nbgrader pipeline and ``make check WEEK=3``.

The tests are ``tests/weeks.py``'s ``week_suite`` (shared with week 4): one
module-scoped pipeline runs ``make check WEEK=3`` on the untouched release in the
background while ONE nbgrader run grades the solution and the known-wrong answers below,
keeping its course folder (its regenerated release and executed solution are checked
too). The wrong answers are packed one per exercise into a few submissions, which is
sound because no exercise's tests use another exercise's answers (checked); each one must
lose points on its own exercise and only there.
"""

from __future__ import annotations

from weeks import NBGRADER_WARNINGS, Wrong, replacing, week_suite

TOTAL = 21
pytestmark = NBGRADER_WARNINGS


RESUME = "return graph.invoke(None, config_of(thread_id))"
FIND = '''    for snapshot in graph.get_state_history(config):
        if node in snapshot.next:
            return snapshot.config
    return None'''
FORK = '''    forked = graph.update_state(past_config, {"refund_cents": cents})
    return graph.invoke(None, forked)'''

BOTH_EX1 = {"ex1_refund_fails_then_resumes", "ex1_hidden"}
# name (its exercise first): Wrong(exercise, the cells it changes, the tests it must fail)
WRONG = {
    "ex1_resend_saved_values": Wrong(1, {"ex1_resume": replacing(
        RESUME, "config = config_of(thread_id)\n"
                "    return graph.invoke(graph.get_state(config).values, config)")},
        BOTH_EX1),
    "ex1_no_checkpointer": Wrong(1, {"ex1_resume": replacing(
        "world=world, checkpointer=InMemorySaver())", "world=world)")},
        BOTH_EX1),
    "ex1_new_thread_id": Wrong(1, {"ex1_resume": replacing(
        RESUME, 'return graph.invoke(None, config_of(thread_id + "-retry"))')},
        BOTH_EX1),
    "ex2_checkpoint_where_the_node_ran": Wrong(2, {"ex2_checkpoint_before": replacing(FIND, '''\
    for snapshot in graph.get_state_history(config):
        if snapshot.values.get("log", [])[-1:] == [node]:
            return snapshot.config
    return None''')},
        {"ex2_visible", "ex2_hidden"}),
    "ex2_oldest_match": Wrong(2, {"ex2_checkpoint_before": replacing(
        "for snapshot in graph.get_state_history(config):",
        "for snapshot in reversed(list(graph.get_state_history(config))):")},
        {"ex2_hidden"}),
    "ex3_replay_without_update": Wrong(3, {"ex3_fork": replacing(
        FORK, "    return graph.invoke(None, past_config)")},
        {"ex3_visible", "ex3_hidden"}),
    "ex3_continue_from_the_old_config": Wrong(3, {"ex3_fork": replacing(
        "return graph.invoke(None, forked)", "return graph.invoke(None, past_config)")},
        {"ex3_visible", "ex3_hidden"}),
    "ex3_update_the_latest_checkpoint": Wrong(3, {"ex3_fork": replacing(FORK, '''\
    latest = config_of(past_config["configurable"]["thread_id"])
    forked = graph.update_state(latest, {"refund_cents": cents})
    return graph.invoke(None, forked)''')},
        {"ex3_visible", "ex3_hidden"}),
    "ex3_start_the_thread_over": Wrong(3, {"ex3_fork": replacing(FORK, '''\
    thread_id = past_config["configurable"]["thread_id"]
    message = graph.get_state(past_config).values["message"]
    graph.checkpointer.delete_thread(thread_id)
    return graph.invoke({"thread_id": thread_id, "message": message, "refund_cents": cents},
                        config_of(thread_id))''')},
        {"ex3_hidden"}),  # visible passes: only history shows it
    "ex4_sync_everywhere": Wrong(4, {"ex4_modes": replacing(
        '{"A": "sync", "B": "async", "C": "exit"}', '{"A": "sync", "B": "sync", "C": "sync"}')},
        {"ex4_hidden"}),
    "ex4_async_and_exit_swapped": Wrong(4, {"ex4_modes": replacing(
        '{"A": "sync", "B": "async", "C": "exit"}', '{"A": "sync", "B": "exit", "C": "async"}')},
        {"ex4_hidden"}),
}


globals().update(week_suite(
    week=3, exercises=4, total=TOTAL, written=[2, 2, 2], wrongs=WRONG,
    bare={"ex2_hidden", "ex3_hidden"},  # some of their failures say only "AssertionError"
    demos=[
        "runs in all: {'parse': 1, 'retrieve': 1, 'refund': 2, 'email': 1}",
        "a new saver sees next = ('refund',)",
        "sending the message again ran: {'parse': 2, 'retrieve': 2",
        "the fork refunded 1500 cents in the sandbox",
        "'body': 2, 'look_up': 1, 'give_back': 2",
        "re_000002  inv_11      4000",
    ],
    said={
        "ex1_resend_saved_values":
            "the resume ran nodes that had already finished",
        "ex2_oldest_match":
            "the one returned is not the most recent",
        "ex3_start_the_thread_over":
            "checkpoint(s) of the original run are gone",
        "ex4_sync_everywhere":
            "B: redoing a read-only step is harmless",
    },
    secrets=['"B": "async"', "checkpoint(s) of the original run are gone",
             "All of them: the resume"],
))
