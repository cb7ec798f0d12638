"""The CloudWave support agent: its state, its graph builder, reference nodes, a scripted model.

May import: everything below it (:mod:`course.base`, :mod:`course.storage`,
:mod:`course.durable`, :mod:`course.world`).

- :mod:`course.cloudwave.graph`: :class:`SupportState`, :func:`build_graph`
  (nodes are ``node(state, world)``), :func:`draw_ascii` (offline drawing).
- :mod:`course.cloudwave.nodes`: reference nodes, naive and keyed, and the
  graphs the crash harness runs (``naive_graph``, ``keyed_graph``, ``support_graph``).
- :mod:`course.cloudwave.agent`: the model-driven agent (``agent`` ⇄ ``tools``)
  that writes a replay record per step, its tools, and the model-change incident.
- :mod:`course.cloudwave.model`: :class:`ScriptedChatModel`, an offline chat model
  that returns a fixed script of tool calls.
"""

from course.cloudwave.agent import (
    INCIDENT_MESSAGE,
    AgentState,
    agent_graph,
    first_message,
    incident_models,
    run_config,
    scripted_calls,
    support_tools,
)
from course.cloudwave.graph import SupportState, build_graph, draw_ascii
from course.cloudwave.model import ScriptedChatModel, ScriptExhausted
from course.cloudwave.nodes import (
    charge_keyed,
    charge_naive,
    email_key,
    email_keyed,
    email_naive,
    keyed_graph,
    naive_graph,
    parse,
    receipt,
    refund_keyed,
    refund_naive,
    retrieve,
    route_by_intent,
    subscription_keyed,
    support_graph,
)

__all__ = [
    "INCIDENT_MESSAGE",
    "AgentState",
    "ScriptExhausted",
    "ScriptedChatModel",
    "SupportState",
    "agent_graph",
    "build_graph",
    "charge_keyed",
    "charge_naive",
    "draw_ascii",
    "email_key",
    "email_keyed",
    "email_naive",
    "first_message",
    "incident_models",
    "keyed_graph",
    "naive_graph",
    "parse",
    "receipt",
    "refund_keyed",
    "refund_naive",
    "retrieve",
    "route_by_intent",
    "run_config",
    "scripted_calls",
    "subscription_keyed",
    "support_graph",
    "support_tools",
]
