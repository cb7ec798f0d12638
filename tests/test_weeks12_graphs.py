"""The package pieces weeks 1 and 2 stand on: the refund graph and its parts (plan.py), the
routed graph (routes.py), the tool-choosing model (tools.py), the flaky catalogue, the
retried-write trap and the sleep-and-retry loop (flaky.py)."""

from __future__ import annotations

import sys
import types

import pytest
from langchain_core.messages import AIMessage
from langgraph.types import RetryPolicy

from course.cloudwave import (
    CatalogueTimeout,
    FlakyCatalogue,
    ScriptedChatModel,
    chat_model,
    choose_tool,
    edges_of,
    refund_graph,
    refund_then_read,
    retrieve_from,
    routed_graph,
    scripted_choice,
    sleep_and_retry,
    state_after_each_step,
    steps_table,
    subscription_naive,
    unwired,
)
from course.world import ProviderTimeout

LIN = {"thread_id": "t-lin", "message": "Please refund invoice inv_12. lin@example.com"}


def by_intent(state):
    return state["intent"] if state.get("intent") in ("refund", "pause", "cancel") else "answer"


# ------------------------------------------------------------------ plan.py
def test_the_refund_graph_refunds_and_mails_once_in_four_steps(world):
    graph = refund_graph(world)
    final = graph.invoke(dict(LIN))
    assert final["log"] == ["parse", "retrieve", "refund", "email"]
    assert edges_of(graph) == {("START", "parse"), ("parse", "retrieve"),
                               ("retrieve", "refund"), ("refund", "email"), ("email", "END")}
    assert (world.ledger().count("refunds", "inv_12"), world.ledger().count("emails")) == (1, 1)


def test_refund_graph_takes_your_nodes_and_refuses_unknown_names(world):
    def my_parse(state, world):
        return {"intent": "refund", "invoice_id": "inv_9", "log": ["mine"]}

    final = refund_graph(world, nodes={"parse": my_parse}).invoke(dict(LIN))
    assert final["log"][0] == "mine" and final["invoice_id"] == "inv_9"
    with pytest.raises(ValueError, match="there is no 'charge'"):
        refund_graph(world, nodes={"charge": my_parse})


def test_unwired_holds_the_four_nodes_and_no_edges(world):
    builder = unwired(world)
    assert list(builder.nodes) == ["parse", "retrieve", "refund", "email"]
    assert builder.edges == set()


def test_state_after_each_step_pairs_each_update_with_the_whole_state(world):
    steps = state_after_each_step(refund_graph(world), dict(LIN))
    assert [s["node"] for s in steps] == ["parse", "retrieve", "refund", "email"]
    assert steps[1]["update"]["log"] == ["retrieve"]
    assert steps[1]["state"]["log"] == ["parse", "retrieve"]
    assert "refund" not in steps[1]["state"] and steps[2]["state"]["refund"]["cents"] == 990
    ada = {"thread_id": "t2", "message": "Please refund invoice inv_10. ada@example.com"}
    table = steps_table(refund_graph(world), ada, ["cents", "refund"])
    assert table.column("after") == ["parse", "retrieve", "refund", "email"]
    assert table.column("refund")[-1].startswith("re_")  # an answer is shown by its id


# ---------------------------------------------------------------- routes.py
@pytest.mark.parametrize(("message", "branch"), [
    ("Please refund inv_12. lin@example.com", "refund"),
    ("Pause my plan, inv_11. marta@example.com", "pause"),
    ("Cancel it, inv_13. sam@example.com", "cancel"),
    ("Please pay inv_10. ada@example.com", "answer"),  # week 2's graph does not charge
])
def test_the_routed_graph_takes_one_branch_and_joins_at_email(world, message, branch):
    final = routed_graph(world, by_intent).invoke({"thread_id": "t", "message": message})
    assert final["log"] == ["parse", "retrieve", branch, "email"]
    changes = world.billing.subscription_changes()
    assert len(world.billing.refunds()) == (branch == "refund")
    assert [c["action"] for c in changes] == ([branch] if branch in ("pause", "cancel") else [])
    assert changes == [] or changes[0]["idempotency_key"] is None  # week 2 writes carry no key
    assert len(world.mail.sent()) == 1 and world.billing.charges() == []


def test_a_route_that_returns_no_branch_stops_with_a_clear_error(world):
    with pytest.raises(ValueError, match="returned 'refnd'; a route must be one of"):
        routed_graph(world, lambda state: "refnd").invoke(dict(LIN))
    assert world.billing.refunds() == []
    with pytest.raises(ValueError, match="nodes the graph does not have: \\['fetch'\\]"):
        routed_graph(world, by_intent, retry_policies={"fetch": RetryPolicy()})


def test_subscription_naive_sends_no_key_so_each_run_is_another_change(world):
    pause = subscription_naive("pause")
    for _ in range(2):
        pause({"customer_id": "cus_ada", "thread_id": "t"}, world)
    assert [c["idempotency_key"] for c in world.billing.subscription_changes()] == [None, None]


# ----------------------------------------------------------------- tools.py
def test_the_models_tool_call_sets_the_intent_and_the_invoice(world):
    model = scripted_choice("pause_subscription", invoice_id="inv_11")
    graph = routed_graph(world, by_intent, first=choose_tool(model))
    final = graph.invoke({"thread_id": "t", "message": "I need a break. marta@example.com"})
    assert (final["intent"], final["invoice_id"]) == ("pause", "inv_11")
    assert final["log"] == ["parse", "retrieve", "pause", "email"]
    assert model.asked[0][-1].content == "I need a break. marta@example.com"


@pytest.mark.parametrize("reply", [
    AIMessage(content="Hello!"),
    AIMessage(content="", tool_calls=[{"name": "delete_everything", "args": {}, "id": "c1"}]),
], ids=["no tool call", "unknown tool"])
def test_a_model_that_calls_no_known_tool_leads_to_unknown(world, reply):
    node = choose_tool(ScriptedChatModel(script=[reply]))
    update = node({"message": "Hi, about inv_9. ada@example.com"}, world)
    assert (update["intent"], update["invoice_id"]) == ("unknown", "inv_9")


def test_scripted_choice_refuses_a_tool_that_does_not_exist():
    with pytest.raises(ValueError, match="no such tool: 'refund'"):
        scripted_choice("refund")


def test_chat_model_stays_scripted_unless_asked_and_says_why(monkeypatch):
    assert chat_model("S", env={}) == ("S", "scripted model (CLOUDWAVE_CHAT_MODEL is not set)")
    monkeypatch.setitem(sys.modules, "langchain.chat_models", None)  # not installed
    model, why = chat_model("S", env={"CLOUDWAVE_CHAT_MODEL": "anthropic:some-model"})
    assert model == "S" and "needs the `langchain` package" in why

    def init_chat_model(name):
        if name == "broken:x":
            raise ValueError("no API key found\nmore detail")
        return f"real {name}"

    fake = types.ModuleType("langchain.chat_models")
    fake.init_chat_model = init_chat_model
    monkeypatch.setitem(sys.modules, "langchain.chat_models", fake)
    assert chat_model("S", env={"CLOUDWAVE_CHAT_MODEL": "good:y"}) == (
        "real good:y", "real model 'good:y'")
    assert chat_model("S", env={"CLOUDWAVE_CHAT_MODEL": "broken:x"}) == (
        "S", "scripted model: 'broken:x' could not be built (no API key found)")


# ----------------------------------------------------------------- flaky.py
def test_the_flaky_catalogue_fails_its_first_reads_then_answers():
    catalogue = FlakyCatalogue(timeouts=2)
    for _ in range(2):
        with pytest.raises(CatalogueTimeout):
            catalogue.invoice("inv_9")
    assert catalogue.invoice("inv_9").cents == 2900
    assert catalogue.invoice("inv_404") is None and catalogue.calls == 4
    with pytest.raises(ValueError, match="0 or more; got -1"):
        FlakyCatalogue(timeouts=-1)


def test_a_retry_policy_on_retrieve_needs_the_error_named(world):
    named = RetryPolicy(max_attempts=3, initial_interval=0.001, retry_on=CatalogueTimeout)
    catalogue = FlakyCatalogue(timeouts=2)
    final = routed_graph(world, by_intent, catalogue=catalogue,
                         retry_policies={"retrieve": named}).invoke(dict(LIN))
    assert final["customer_id"] == "cus_lin" and catalogue.calls == 3
    catalogue = FlakyCatalogue(timeouts=2)
    with pytest.raises(CatalogueTimeout):  # the default retry_on leaves TimeoutError alone
        routed_graph(world, by_intent, catalogue=catalogue,
                     retry_policies={"retrieve": RetryPolicy()}).invoke(dict(LIN))
    assert catalogue.calls == 1


def test_retrieve_from_refuses_an_unknown_invoice(world):
    with pytest.raises(ValueError, match="no such invoice: 'inv_404'"):
        retrieve_from(FlakyCatalogue())({"invoice_id": "inv_404"}, world)


def test_the_trap_a_retried_node_repeats_its_write(world):
    policy = RetryPolicy(max_attempts=3, initial_interval=0.001, retry_on=CatalogueTimeout)
    graph = routed_graph(world, by_intent, retry_policies={"refund": policy},
                         nodes={"refund": refund_then_read(FlakyCatalogue(timeouts=1), 500)})
    final = graph.invoke({"thread_id": "t", "message": "Refund inv_9. ada@example.com"})
    assert [r["cents"] for r in world.billing.refunds()] == [500, 500]
    assert final["refund"]["id"] == world.billing.refunds()[-1]["id"]  # the state kept one


def test_sleep_and_retry_turns_a_lost_answer_into_a_second_charge(world):
    world.billing.inject("lose_response")
    sleep_and_retry(lambda: world.billing.charge(customer_id="cus_ada", invoice_id="inv_9",
                                                 cents=2900, currency="usd"), pause_s=0)
    assert world.ledger().doubles() == [{"invoice_id": "inv_9", "what": "charges", "count": 2}]


def test_sleep_and_retry_gives_up_after_its_tries_and_checks_them(world):
    calls = []

    def always_slow():
        calls.append(1)
        raise ProviderTimeout("no answer")

    with pytest.raises(ProviderTimeout):
        sleep_and_retry(always_slow, tries=3, pause_s=0)
    assert len(calls) == 3
    with pytest.raises(ValueError, match="tries must be a whole number, 1 or more; got 0"):
        sleep_and_retry(always_slow, tries=0)
