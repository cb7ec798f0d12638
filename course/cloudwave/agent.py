"""CloudWave's model-driven support agent, with a replay record for every step.

The reference graph in :mod:`course.cloudwave.nodes` hard-codes its steps; this
one lets a chat model choose them, as a real agent does: ``agent`` asks the
model what to do next, ``tools`` runs the tool calls it asked for against the
world, and the loop ends when the model answers in text.

Every step leaves a :class:`~course.durable.replay.ReplayRecord` in a
:class:`~course.durable.replay.ReplayLog`: the model name and version that
answered (read from the reply, so a run resumed by a newer deployment shows
the change at the step where it happened), the hash of the transcript the
model saw, the tool calls and their results.

:func:`support_tools` builds the tools for one conversation: ``keyed=True``
derives every key from the thread and the invoice (a re-sent charge is
replayed by the bank, a re-sent receipt by the mail vendor, and a conversation
that pays two invoices sends two receipts), ``keyed=False`` sends none (the
incident's tools).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, TypedDict

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages

from course.cloudwave.graph import instrument
from course.cloudwave.nodes import receipt
from course.durable.guard import readable_key
from course.durable.replay import ReplayLog, ReplayRecord, transcript_hash
from course.world.catalogue import CUSTOMERS, INVOICES

Tools = dict[str, Callable[..., Any]]


class AgentState(TypedDict, total=False):
    thread_id: str
    messages: Annotated[list, add_messages]
    step: int  # how many times the model was asked


def support_tools(world: Any, thread_id: str, *, keyed: bool = True) -> Tools:
    """``lookup_invoice``, ``charge`` and ``send_receipt`` for one conversation."""

    def lookup_invoice(invoice_id: str) -> dict[str, Any]:
        invoice = INVOICES.get(invoice_id)
        if invoice is None:
            raise ValueError(f"no such invoice: {invoice_id!r}")
        return {"invoice_id": invoice_id, "customer_id": invoice.customer_id,
                "cents": invoice.cents, "currency": invoice.currency,
                "customer_email": CUSTOMERS[invoice.customer_id].email}

    def charge(invoice_id: str) -> dict[str, Any]:
        found = lookup_invoice(invoice_id)
        key = readable_key(thread_id, "charge", invoice_id) if keyed else None
        return world.billing.charge(customer_id=found["customer_id"], invoice_id=invoice_id,
                                    cents=found["cents"], currency=found["currency"],
                                    idempotency_key=key)

    def send_receipt(invoice_id: str) -> dict[str, Any]:
        found = lookup_invoice(invoice_id)
        mail = receipt({**found, "intent": "charge"})
        # The invoice, not week 5's customer: one conversation may pay two invoices.
        email_id = readable_key(thread_id, mail["template"], invoice_id) if keyed else None
        return world.mail.send(**mail, email_id=email_id)

    return {"lookup_invoice": lookup_invoice, "charge": charge, "send_receipt": send_receipt}


def model_identity(model: Any, reply: AIMessage | None = None) -> tuple[str, str]:
    """(name, version) of the model that wrote ``reply`` (the reply's own stamp first)."""
    name = getattr(model, "name", None) or getattr(model, "model_name", None) \
        or type(model).__name__
    version = (reply.response_metadata.get("model_version") if reply is not None else None) \
        or getattr(model, "model_version", None) or "unknown"
    return str(name), str(version)


def agent_graph(world: Any, checkpointer: Any = None, *, model: Any, log: ReplayLog,
                tools: Callable[[Any, str], Tools] = support_tools):
    """The loop ``agent ⇄ tools``; ``tools(world, thread_id)`` gives the tool functions."""

    def agent(state: dict[str, Any], world: Any) -> dict[str, Any]:
        seen = state["messages"]
        reply = model.invoke(seen)
        step = state.get("step", 0) + 1
        if not reply.tool_calls:  # the last step: no tool runs, record it here
            name, version = model_identity(model, reply)
            log.append(ReplayRecord(step, "agent", name, version, transcript_hash(seen),
                                    reply=str(reply.content)))
        return {"messages": [reply], "step": step}

    def run_tools(state: dict[str, Any], world: Any) -> dict[str, Any]:
        *seen, asked = state["messages"]
        available = tools(world, state["thread_id"])
        results, messages = [], []
        for call in asked.tool_calls:
            if call["name"] not in available:
                raise ValueError(f"the model called {call['name']!r}, which is not a tool "
                                 f"(tools: {', '.join(available)})")
            result = available[call["name"]](**call["args"])
            results.append(result)
            messages.append(ToolMessage(content=str(result), tool_call_id=call["id"]))
        name, version = model_identity(model, asked)
        log.append(ReplayRecord(state["step"], "tools", name, version, transcript_hash(seen),
                                [{"name": c["name"], "args": c["args"]} for c in asked.tool_calls],
                                results))
        return {"messages": messages}

    def route(state: dict[str, Any]) -> str:
        return "tools" if state["messages"][-1].tool_calls else END

    graph = StateGraph(AgentState)
    graph.add_node("agent", instrument("agent", agent, world))
    graph.add_node("tools", instrument("tools", run_tools, world))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", route, ["tools", END])
    graph.add_edge("tools", "agent")
    return graph.compile(checkpointer=checkpointer)


def first_message(thread_id: str, text: str) -> dict[str, Any]:
    """The input that starts a conversation."""
    return {"thread_id": thread_id, "messages": [HumanMessage(text)], "step": 0}


# ------------------------------------------------------------------ the incident
OLD_MODEL, NEW_MODEL = "2025-05-01", "2025-06-01"
MODEL_NAME = "cloudwave-support"
INCIDENT_MESSAGE = "Hi, Ada here (ada@example.com). Please pay invoice inv_9."


def scripted_calls(*calls: tuple[str, dict[str, Any]], final: str | None = None,
                   version: str, first_id: int = 1) -> Any:
    """A :class:`ScriptedChatModel` named ``cloudwave-support`` that makes ``calls`` in turn."""
    from course.cloudwave.model import ScriptedChatModel

    script = [AIMessage(content="", tool_calls=[{"name": name, "args": args,
                                                 "id": f"call_{first_id + i}"}])
              for i, (name, args) in enumerate(calls)]
    if final is not None:
        script.append(AIMessage(content=final))
    return ScriptedChatModel(name=MODEL_NAME, model_version=version, script=script)


def incident_models() -> tuple[Any, Any]:
    """The two deployments of the incident: the old model looks the invoice up and charges;
    the new one, which resumes the run, charges again "to be sure", then sends the receipt."""
    old = scripted_calls(("lookup_invoice", {"invoice_id": "inv_9"}),
                         ("charge", {"invoice_id": "inv_9"}), version=OLD_MODEL)
    new = scripted_calls(("charge", {"invoice_id": "inv_9"}),
                         ("send_receipt", {"invoice_id": "inv_9"}),
                         final="Your invoice inv_9 is paid.", version=NEW_MODEL, first_id=3)
    return old, new


def run_config(thread_id: str, model: Any) -> dict[str, Any]:
    """A config whose metadata (copied into every checkpoint) names the model."""
    from course.durable.replay import model_metadata

    name, version = model_identity(model)
    return {"configurable": {"thread_id": thread_id},
            "metadata": model_metadata(name, version)}
