"""The CloudWave support agent: its state, its graph builder, reference nodes, a scripted model.

May import: everything below it (:mod:`course.base`, :mod:`course.storage`,
:mod:`course.durable`, :mod:`course.world`).

- :mod:`course.cloudwave.graph`: :class:`SupportState`, :func:`build_graph`
  (nodes are ``node(state, world)``), :func:`draw_ascii` (offline drawing).
- :mod:`course.cloudwave.nodes`: reference nodes, naive and keyed, and the
  graphs the crash harness runs (``naive_graph``, ``keyed_graph``, ``support_graph``).
- :mod:`course.cloudwave.refund_flow`: the routed graph of weeks 1-2 with a naive
  partial refund (``naive_support_graph``, ``support_nodes``, ``build_support_graph``).
- :mod:`course.cloudwave.checkpoints`: a thread's checkpoints as rows
  (:func:`history_rows`, :func:`history_table`).
- :mod:`course.cloudwave.approval`: week 4's approval step (``approval_request``,
  ``read_decision``, ``ask_a_person``, ``approval_graph``).
- :mod:`course.cloudwave.model`: :class:`ScriptedChatModel`, an offline chat model
  that returns a fixed script of tool calls.
"""

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
from course.cloudwave.refund_flow import (
    REFUND_MESSAGE,
    build_support_graph,
    naive_support_graph,
    refund_asked,
    support_nodes,
)

__all__ = [
    "APPROVAL_THRESHOLD_CENTS",
    "APPROVERS",
    "REFUND_MESSAGE",
    "ScriptExhausted",
    "ScriptedChatModel",
    "SupportState",
    "approval_graph",
    "approval_notice",
    "approval_request",
    "ask_a_person",
    "build_graph",
    "build_support_graph",
    "charge_keyed",
    "charge_naive",
    "draw_ascii",
    "email_key",
    "email_keyed",
    "email_naive",
    "history_rows",
    "history_table",
    "keyed_graph",
    "naive_graph",
    "naive_support_graph",
    "notices_sent",
    "notify_partner",
    "parse",
    "read_decision",
    "receipt",
    "refund_asked",
    "refund_keyed",
    "refund_naive",
    "retrieve",
    "route_by_intent",
    "subscription_keyed",
    "support_graph",
    "support_nodes",
]
