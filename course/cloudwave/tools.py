"""A chat model choosing CloudWave's tool, scripted offline (or a real one, if you ask).

Promises:
- :data:`TOOLS` are the four tools the model may call, as LangChain tools whose
  names and docstrings are what a model sees; :data:`TOOL_INTENTS` maps each
  tool name to the route label it stands for.
- :func:`choose_tool` makes the first node of the routed graph from a chat model:
  it binds :data:`TOOLS`, asks the model about the customer's message, and turns
  the first tool call into ``intent`` (and ``invoice_id`` when the call names
  one). A reply with no tool call, or a call of a tool it does not know, gives
  ``intent="unknown"``: the route sends that to the safe branch.
- :func:`scripted_choice` is a :class:`ScriptedChatModel` that calls one tool.
- :func:`chat_model` returns a real model only when ``CLOUDWAVE_CHAT_MODEL`` is set
  (e.g. ``anthropic:claude-sonnet-4-5``) *and* ``langchain``'s ``init_chat_model``
  can build it; otherwise the scripted model you passed, with a sentence saying
  why. Nothing here needs a network or a key unless you set the variable.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage
from langchain_core.tools import tool

from course.cloudwave.model import ScriptedChatModel
from course.cloudwave.nodes import parse

MODEL_VARIABLE = "CLOUDWAVE_CHAT_MODEL"
INSTRUCTIONS = ("You are CloudWave's support agent. Call exactly one tool that does what the "
                "customer asks; call answer_question when no other tool fits.")


@tool
def refund_invoice(invoice_id: str) -> str:
    """Refund a paid CloudWave invoice, e.g. inv_9."""
    return f"refund {invoice_id}"


@tool
def pause_subscription(invoice_id: str) -> str:
    """Pause the subscription of the customer who was billed this invoice."""
    return f"pause {invoice_id}"


@tool
def cancel_subscription(invoice_id: str) -> str:
    """Cancel the subscription of the customer who was billed this invoice."""
    return f"cancel {invoice_id}"


@tool
def answer_question(question: str) -> str:
    """Answer the customer in writing without changing anything (the safe choice)."""
    return f"answer {question}"


TOOLS = (refund_invoice, pause_subscription, cancel_subscription, answer_question)
TOOL_INTENTS = {"refund_invoice": "refund", "pause_subscription": "pause",
                "cancel_subscription": "cancel", "answer_question": "unknown"}


def choose_tool(model: Any):
    """A first node (``node(state, world)``) in which ``model`` picks the tool."""
    bound = model.bind_tools(list(TOOLS))

    def choose(state: dict[str, Any], world: Any) -> dict[str, Any]:
        reply = bound.invoke([SystemMessage(INSTRUCTIONS), HumanMessage(state["message"])])
        calls = getattr(reply, "tool_calls", None) or []
        found = parse(state, world)  # the invoice, read from the text
        update = {"invoice_id": found["invoice_id"], "intent": "unknown", "log": ["parse"]}
        if calls:
            call = calls[0]
            update["intent"] = TOOL_INTENTS.get(call["name"], "unknown")
            named = (call.get("args") or {}).get("invoice_id")
            if isinstance(named, str) and named:
                update["invoice_id"] = named
        return update

    choose.__name__ = "parse"
    return choose


def scripted_choice(tool_name: str, **args: Any) -> ScriptedChatModel:
    """A scripted model whose one reply calls ``tool_name`` with ``args``."""
    if tool_name not in TOOL_INTENTS:
        raise ValueError(f"no such tool: {tool_name!r}; the tools are {list(TOOL_INTENTS)}")
    return ScriptedChatModel.tool_calls((tool_name, args))


def chat_model(scripted: Any, env: Mapping[str, str] | None = None) -> tuple[Any, str]:
    """``(model, why)``: a real model if ``CLOUDWAVE_CHAT_MODEL`` asks for one and it can be
    built, else ``scripted``."""
    name = (os.environ if env is None else env).get(MODEL_VARIABLE, "").strip()
    if not name:
        return scripted, f"scripted model ({MODEL_VARIABLE} is not set)"
    try:
        from langchain.chat_models import init_chat_model
    except ImportError:
        return scripted, (f"scripted model: {MODEL_VARIABLE}={name!r} needs the `langchain` "
                          "package and the provider's package (pip install langchain "
                          "langchain-anthropic, for example)")
    try:
        return init_chat_model(name), f"real model {name!r}"
    except Exception as error:  # a missing provider package or key: say so, stay offline
        first = (str(error).strip().splitlines() or [type(error).__name__])[0]
        return scripted, f"scripted model: {name!r} could not be built ({first})"
