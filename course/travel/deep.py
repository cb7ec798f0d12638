"""Marta's booking agent in LangChain Deep Agents, offline, on a real checkpointer.

- :func:`flight_tools`: the two tools the agent gets, ``search_flights`` (reads)
  and ``book_flight`` (books and charges, through the function you pass:
  :func:`course.travel.book_naive` or :func:`course.travel.book_once`).
- :func:`marta_agent`: ``create_deep_agent(model=..., tools=..., checkpointer=...)``
  with the scripted model, so it runs with no network and no key.
- :func:`checkpointer`: a context manager that opens SqliteSaver on a file, or
  PostgresSaver on a ``postgresql://`` URI (``setup()`` called once).
- :func:`run_booking`: what one process does: open the world and the
  checkpointer, then either ask for the booking, resume the thread with
  ``invoke(None, config)``, or send a new message. Every invoke uses
  ``durability="sync"``, so a SIGKILL loses no finished step.

Deep Agents' durability is LangGraph's: the checkpointer keeps every finished
step, and a resumed thread re-runs only the tool call that was running when the
process died. It does not know that ``book_flight`` is not idempotent: that
re-run books again unless the tool itself is guarded.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool, tool

from course.travel.airline import TravelWorld
from course.travel.booking import TRIP, Book, book_once, describe
from course.travel.model import marta_model

ASK = "Book Marta Ruiz on the 10:42 flight from Madrid to Barcelona on 14 March."
CONTINUE = "Continue Marta's booking."


def flight_tools(world: TravelWorld, trip_id: str = TRIP, book: Book = book_once) -> list[BaseTool]:
    """``search_flights`` and ``book_flight`` over ``world``; booking goes through ``book``."""

    @tool
    def search_flights(origin: str, destination: str, date: str) -> str:
        """Flights from origin to destination (IATA codes) on date (YYYY-MM-DD)."""
        return json.dumps(world.airline.search(origin, destination, date))

    @tool
    def book_flight(flight_id: str) -> str:
        """Book a seat on flight_id for Marta and charge the fare."""
        return describe(book(world, trip_id, flight_id))

    return [search_flights, book_flight]


def preload() -> None:
    """Import Deep Agents and the SQLite saver once, so forked processes start warm."""
    import deepagents  # noqa: F401
    from langgraph.checkpoint.sqlite import SqliteSaver  # noqa: F401


def marta_agent(world: TravelWorld, saver: Any, *, book: Book = book_once,
                trip_id: str = TRIP, model: Any = None) -> Any:
    """A Deep Agents agent that books Marta's flight, checkpointed by ``saver``."""
    from deepagents import create_deep_agent  # heavy: imported when an agent is built

    return create_deep_agent(model=model or marta_model(),
                             tools=flight_tools(world, trip_id, book),
                             system_prompt="You book flights for CloudWave's travel desk.",
                             checkpointer=saver)


@contextmanager
def checkpointer(where: str | Path) -> Iterator[Any]:
    """SqliteSaver on a file, or PostgresSaver on a ``postgresql://`` URI, set up and ready."""
    where = str(where)
    if where.startswith(("postgresql://", "postgres://")):
        from langgraph.checkpoint.postgres import PostgresSaver

        with PostgresSaver.from_conn_string(where) as saver:
            saver.setup()
            yield saver
        return
    from langgraph.checkpoint.sqlite import SqliteSaver

    conn = sqlite3.connect(where, check_same_thread=False)
    try:
        saver = SqliteSaver(conn)
        saver.setup()
        yield saver
    finally:
        conn.close()


def config(thread_id: str = TRIP) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id}}


def run_booking(world_dir: str | Path, saver_at: str | Path, *, how: str = "ask",
                book: Book = book_once, thread_id: str = TRIP) -> list[Any]:
    """One process's work on Marta's thread; returns the thread's messages.

    ``how``: ``"ask"`` (the first request), ``"resume"`` (``invoke(None, config)``:
    finish what was running) or ``"continue"`` (send "Continue Marta's booking.",
    which is new input, not a resume).
    """
    inputs = {"ask": {"messages": [{"role": "user", "content": ASK}]},
              "resume": None,
              "continue": {"messages": [{"role": "user", "content": CONTINUE}]}}
    if how not in inputs:
        raise ValueError(f"how must be one of {', '.join(inputs)}, not {how!r}")
    world = TravelWorld(world_dir)
    try:
        with checkpointer(saver_at) as saver:
            agent = marta_agent(world, saver, book=book, trip_id=thread_id)
            result = agent.invoke(inputs[how], config(thread_id), durability="sync")
            return result["messages"]
    finally:
        world.close()


def cancelled_calls(messages: list[Any]) -> list[str]:
    """Tool calls that Deep Agents marked as not completed (what new input does to them)."""
    return [m.name for m in messages
            if isinstance(m, ToolMessage) and "did not complete" in str(m.content)]
