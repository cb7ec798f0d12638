"""Marta's flight: the same booking agent in Deep Agents and in the Claude Agent SDK.

May import: :mod:`course.base`, :mod:`course.storage`, :mod:`course.durable`,
:mod:`course.world`, :mod:`course.cloudwave` (whose scripted model it reuses; that is
why it has a floor of its own, just above the CloudWave agent).

- :mod:`course.travel.airline`: :class:`Airline` (the billing simulator's key rules,
  plus flights and bookings) and :class:`TravelWorld` (airline + guard records + ledger).
- :mod:`course.travel.booking`: :func:`book_naive` and :func:`book_once` (guard +
  reconcile), the one booking function both frameworks call.
- :mod:`course.travel.model`: :class:`ConversationScriptedModel` (a
  :class:`course.cloudwave.ScriptedChatModel` that reads the conversation, so a
  resumed process replies as the old one would).
- :mod:`course.travel.deep`: ``create_deep_agent`` with the tools and a SqliteSaver or
  PostgresSaver; :func:`run_booking` (ask / resume / continue).
- :mod:`course.travel.claude`: the Claude Agent SDK side: the booking tool as an
  in-process MCP tool, session resume and fork, file checkpointing, all offline
  through :mod:`course.travel.fake_claude` (a stand-in ``claude`` program).
"""

from course.travel.airline import FLIGHTS, Airline, Flight, TravelWorld
from course.travel.booking import MARTA, TRIP, book_naive, book_once, describe
from course.travel.claude import (
    MARTA_SCRIPT,
    SessionRun,
    fake_cli,
    in_own_thread,
    options,
    run_session,
    transcript,
    travel_server,
    write_then_rewind,
)
from course.travel.claude import preload as _preload_sdk
from course.travel.deep import (
    ASK,
    CONTINUE,
    cancelled_calls,
    checkpointer,
    config,
    flight_tools,
    marta_agent,
    run_booking,
)
from course.travel.deep import preload as _preload_deep_agents
from course.travel.model import ConversationScriptedModel, marta_model


def preload() -> None:
    """Import both frameworks once (seconds); do it before forking crash workers."""
    _preload_deep_agents()
    _preload_sdk()


__all__ = ["ASK", "CONTINUE", "FLIGHTS", "MARTA", "MARTA_SCRIPT", "TRIP", "Airline",
           "ConversationScriptedModel", "Flight", "SessionRun", "TravelWorld", "book_naive",
           "book_once", "cancelled_calls", "checkpointer", "config", "describe", "fake_cli",
           "flight_tools", "in_own_thread", "marta_agent", "marta_model", "options", "preload",
           "run_booking", "run_session", "transcript", "travel_server", "write_then_rewind"]
