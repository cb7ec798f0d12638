"""The CloudWave support agent: its state, its graph builder, reference nodes, a scripted model.

May import: everything below it (:mod:`course.base`, :mod:`course.storage`,
:mod:`course.durable`, :mod:`course.world`).

- :mod:`course.cloudwave.graph`: :class:`SupportState`, :func:`build_graph`
  (nodes are ``node(state, world)``), :func:`draw_ascii` (offline drawing).
- :mod:`course.cloudwave.nodes`: reference nodes, naive and keyed, and the
  graphs the crash harness runs (``naive_graph``, ``keyed_graph``, ``support_graph``).
- :mod:`course.cloudwave.agent`: the model-driven agent (``agent`` ⇄ ``tools``)
  that writes a replay record per step, its tools, and the model-change incident.
- :mod:`course.cloudwave.refund_flow`: the routed graph of weeks 1-2 with a naive
  partial refund (``naive_support_graph``, ``support_nodes``, ``build_support_graph``).
- :mod:`course.cloudwave.checkpoints`: a thread's checkpoints as rows
  (:func:`history_rows`, :func:`history_table`).
- :mod:`course.cloudwave.approval`: week 4's approval step (``approval_request``,
  ``read_decision``, ``ask_a_person``, ``approval_graph``).
- :mod:`course.cloudwave.model`: :class:`ScriptedChatModel`, an offline chat model
  that returns a fixed script of tool calls.
- :mod:`course.cloudwave.plan`: week 1's graph (parse → retrieve → refund → email),
  the same nodes unwired, the edges of a compiled graph, the state after each step.
- :mod:`course.cloudwave.routes`: week 2's routed graph (refund / pause / cancel /
  answer, joined at email) around your route function.
- :mod:`course.cloudwave.tools`: the tools a chat model chooses from, the node in which
  it chooses, and an optional real model behind ``CLOUDWAVE_CHAT_MODEL``.
- :mod:`course.cloudwave.flaky`: a catalogue read that times out now and then, the
  refund-then-read trap, and the "sleep and retry" loop.
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
from course.cloudwave.approval import (
    APPROVAL_THRESHOLD_CENTS,
    APPROVERS,
    approval_graph,
    approval_notice,
    approval_request,
    ask_a_person,
    notices_sent,
    notify_partner,
    read_decision,
)
from course.cloudwave.checkpoints import history_rows, history_table
from course.cloudwave.flaky import (
    CatalogueTimeout,
    FlakyCatalogue,
    refund_then_read,
    retrieve_from,
    sleep_and_retry,
)
from course.cloudwave.graph import SupportState, build_graph, draw_ascii
from course.cloudwave.model import ScriptedChatModel, ScriptExhausted
from course.cloudwave.nodes import (
    DEFAULT_MESSAGE,
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
    subscription_naive,
    support_graph,
)
from course.cloudwave.plan import (
    REFUND_FLOW,
    edges_of,
    refund_graph,
    state_after_each_step,
    steps_table,
    unwired,
)
from course.cloudwave.refund_flow import (
    REFUND_MESSAGE,
    build_support_graph,
    naive_support_graph,
    refund_asked,
    support_nodes,
)
from course.cloudwave.routes import ROUTE_LABELS, answer, reply, routed_graph
from course.cloudwave.tools import (
    TOOL_INTENTS,
    TOOLS,
    chat_model,
    choose_tool,
    scripted_choice,
)

__all__ = [
    "APPROVAL_THRESHOLD_CENTS",
    "APPROVERS",
    "DEFAULT_MESSAGE",
    "INCIDENT_MESSAGE",
    "REFUND_FLOW",
    "REFUND_MESSAGE",
    "ROUTE_LABELS",
    "TOOLS",
    "TOOL_INTENTS",
    "AgentState",
    "CatalogueTimeout",
    "FlakyCatalogue",
    "ScriptExhausted",
    "ScriptedChatModel",
    "SupportState",
    "agent_graph",
    "answer",
    "approval_graph",
    "approval_notice",
    "approval_request",
    "ask_a_person",
    "build_graph",
    "build_support_graph",
    "charge_keyed",
    "charge_naive",
    "chat_model",
    "choose_tool",
    "draw_ascii",
    "edges_of",
    "email_key",
    "email_keyed",
    "email_naive",
    "first_message",
    "history_rows",
    "history_table",
    "incident_models",
    "keyed_graph",
    "naive_graph",
    "naive_support_graph",
    "notices_sent",
    "notify_partner",
    "parse",
    "read_decision",
    "receipt",
    "refund_asked",
    "refund_graph",
    "refund_keyed",
    "refund_naive",
    "refund_then_read",
    "reply",
    "retrieve",
    "retrieve_from",
    "route_by_intent",
    "routed_graph",
    "run_config",
    "scripted_calls",
    "scripted_choice",
    "sleep_and_retry",
    "state_after_each_step",
    "steps_table",
    "subscription_keyed",
    "subscription_naive",
    "support_graph",
    "support_nodes",
    "support_tools",
    "unwired",
]
