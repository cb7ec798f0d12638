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
  in-process MCP tool, session resume and fork, file checkpointing, on the real Claude
  Code CLI (:mod:`course.travel.cli`: which one, pinned; ``find_cli()``) whose model is
  :mod:`course.travel.api` (a scripted Messages API on 127.0.0.1), or on the stand-in
  :mod:`course.travel.fake_claude` where the real CLI is missing.
"""

from __future__ import annotations

import importlib
from typing import Any

from course.travel.airline import FLIGHTS, Airline, Flight, TravelWorld
from course.travel.booking import MARTA, TRIP, book_naive, book_once, describe

# The two frameworks cost about a second of imports; a process that only books (a graded
# test's fresh interpreter, a crash worker) imports them when a name below is first used.
_LAZY = {
    "claude": ("MARTA_SCRIPT", "SessionRun", "claude_program", "fake_cli", "in_own_thread",
               "options", "run_session", "transcript", "travel_server", "write_then_rewind"),
    "cli": ("find_cli",),
    "api": ("ScriptedAPI", "read_log"),
    "deep": ("ASK", "CONTINUE", "cancelled_calls", "checkpointer", "config", "flight_tools",
             "marta_agent", "run_booking"),
    "model": ("ConversationScriptedModel", "marta_model"),
}
_HOME = {name: module for module, names in _LAZY.items() for name in names}
_RENAMED = {"find_cli": "find"}


def __getattr__(name: str) -> Any:
    if name in _HOME:
        module = importlib.import_module(f"course.travel.{_HOME[name]}")
        return getattr(module, _RENAMED.get(name, name))
    raise AttributeError(f"module 'course.travel' has no attribute {name!r}")


def preload() -> None:
    """Import both frameworks once (seconds); do it before forking crash workers."""
    from course.travel import claude, deep

    deep.preload()
    claude.preload()


__all__ = ["ASK", "CONTINUE", "FLIGHTS", "MARTA", "MARTA_SCRIPT", "TRIP", "Airline",
           "ConversationScriptedModel", "Flight", "ScriptedAPI", "SessionRun", "TravelWorld",
           "book_naive", "book_once", "cancelled_calls", "checkpointer", "claude_program",
           "config", "describe", "fake_cli", "find_cli", "flight_tools", "in_own_thread",
           "marta_agent", "marta_model", "options", "preload", "read_log", "run_booking",
           "run_session", "transcript", "travel_server", "write_then_rewind"]
