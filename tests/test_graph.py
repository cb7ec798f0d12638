"""The graph builder: linear chains, routes with a join, errors, and the offline drawing."""

from __future__ import annotations

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph

from course.cloudwave.graph import SupportState, build_graph, draw_ascii
from course.cloudwave.nodes import parse, support_graph

MESSAGES = {
    "refund": "Please refund invoice inv_9. ada@example.com",
    "pause": "Can you pause my plan? Last invoice inv_11, marta@example.com",
    "cancel": "Cancel everything, invoice inv_12. lin@example.com",
    "charge": "Please pay invoice inv_10 now. ada@example.com",
}


@pytest.mark.parametrize("intent", list(MESSAGES))
def test_the_routed_support_graph_takes_one_branch_then_emails(world, intent):
    graph = support_graph(world, InMemorySaver())
    config = {"configurable": {"thread_id": f"t-{intent}"}}
    final = graph.invoke({"thread_id": f"t-{intent}", "message": MESSAGES[intent]}, config)
    assert final["intent"] == intent
    assert final["log"] == ["parse", "retrieve", intent, "email"]
    moved = everything_that_moved(world)
    expected = {"charges": 0, "refunds": 0, "subscription_changes": 0, "emails": 1}
    expected[{"refund": "refunds", "charge": "charges"}.get(intent, "subscription_changes")] = 1
    assert moved == expected
    # The same thread again is a replay for every keyed effect: nothing moves twice.
    graph.invoke({"thread_id": f"t-{intent}", "message": MESSAGES[intent]},
                 {"configurable": {"thread_id": f"t-{intent}-again"}})
    assert everything_that_moved(world) == expected


def everything_that_moved(world) -> dict[str, int]:
    """Every counter of the outside world: money, subscriptions and mail."""
    return {"charges": len(world.billing.charges()), "refunds": len(world.billing.refunds()),
            "subscription_changes": len(world.billing.subscription_changes()),
            "emails": len(world.mail.sent())}


def test_draw_ascii_shows_routes_without_a_network(world):
    drawing = draw_ascii(support_graph(world))
    assert "retrieve -?-> cancel | charge | pause | refund" in drawing
    assert "email ---> END" in drawing
    assert drawing.splitlines()[-1] == "(a | b: the route picks one)"


def test_draw_ascii_joins_a_fan_out_and_says_it_runs_in_one_step():
    graph = StateGraph(SupportState)
    for name in ("parse", "refund", "review"):
        graph.add_node(name, lambda state: {})
    graph.add_edge(START, "parse")
    graph.add_edge("parse", "refund")
    graph.add_edge("parse", "review")
    graph.add_edge("refund", END)
    lines = [line.strip() for line in draw_ascii(graph.compile()).splitlines()]
    assert "parse ---> refund + review" in lines
    assert "review ---> END" in lines  # LangGraph ends a node that has no edge of its own
    assert lines[-1] == "(a + b: both run, in the same step)"


def test_draw_ascii_lines_up_arrows_whatever_the_longest_name(world):
    def step(state, world):
        return {}

    graph = build_graph({"parse": step, "a_rather_long_node_name": step, "email": step},
                        world=world)
    lines = draw_ascii(graph).splitlines()
    assert [line.split()[0] for line in lines] == [
        "START", "parse", "a_rather_long_node_name", "email"]
    assert len({line.index("--->") for line in lines}) == 1, lines  # one column of arrows
    assert lines[2].startswith("a_rather_long_node_name --->")


def test_builder_errors_are_explained(world):
    with pytest.raises(ValueError, match="at least one node"):
        build_graph({}, world=world)
    with pytest.raises(ValueError, match="routes name nodes that were not given"):
        build_graph({"parse": parse}, world=world,
                    routes=("parse", lambda s: "x", {"x": "refund"}))
