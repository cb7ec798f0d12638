"""Reading a thread's checkpoints: one row per checkpoint, newest first, as plain data.

:func:`history_rows` walks ``graph.get_state_history(config)`` and says, for every
checkpoint, what the week 3 lesson asks about it:

- ``step`` and ``source`` from the checkpoint's metadata (``input``: the run's
  input was saved; ``loop``: a step of the graph finished; ``update``: someone
  called ``update_state``; ``fork``: a copy was taken),
- ``after``: the node(s) whose writes this checkpoint saved (read from the older
  checkpoint's ``next``, since LangGraph's metadata no longer lists the writes),
- ``next``: the node(s) that would run if the thread resumed from here,
- ``checkpoint_id`` and ``parent_id``: how the checkpoints chain (a fork shows up
  as two checkpoints with the same parent),
- ``values``: the state at that checkpoint (a copy).

:func:`history_table` is the same data as a :class:`course.base.Table` (values left out).
"""

from __future__ import annotations

import copy
from typing import Any

from course.base.table import Table

COLUMNS = ("step", "source", "after", "next", "checkpoint_id", "parent_id")


def history_rows(graph: Any, config: dict[str, Any]) -> list[dict[str, Any]]:
    """Every checkpoint of the thread in ``config``, newest first (see the module docstring)."""
    if "thread_id" not in config.get("configurable", {}):
        raise ValueError("config needs a thread id: {'configurable': {'thread_id': ...}}")
    snapshots = list(graph.get_state_history(config))
    by_id = {s.config["configurable"]["checkpoint_id"]: s for s in snapshots}
    rows = []
    for snap in snapshots:
        parent_id = (snap.parent_config or {}).get("configurable", {}).get("checkpoint_id")
        parent = by_id.get(parent_id) if parent_id else None
        source = snap.metadata.get("source", "") if snap.metadata else ""
        if source == "loop" and parent is not None:
            after = _names(parent.next) or "-"
        else:
            after = {"input": "(input)", "update": "(update_state)",
                     "fork": "(copy of parent)"}.get(source, "-")
        rows.append({"step": snap.metadata.get("step") if snap.metadata else None,
                     "source": source, "after": after,
                     "next": _names(snap.next) or "(end)",
                     "checkpoint_id": snap.config["configurable"]["checkpoint_id"],
                     "parent_id": parent_id or "",
                     "values": copy.deepcopy(dict(snap.values)),
                     "config": snap.config})
    return rows


def history_table(graph: Any, config: dict[str, Any], *, short_ids: bool = True) -> Table:
    """:func:`history_rows` as a table (ids shortened to their last 8 characters)."""
    rows = []
    for row in history_rows(graph, config):
        shown = {c: row[c] for c in COLUMNS}
        if short_ids:
            shown["checkpoint_id"] = shown["checkpoint_id"][-8:]
            shown["parent_id"] = shown["parent_id"][-8:]
        shown["log"] = " → ".join(row["values"].get("log", []))
        rows.append(shown)
    thread = config["configurable"]["thread_id"]
    return Table(rows, [*COLUMNS, "log"], title=f"history of thread {thread!r}, newest first")


def _names(nodes: tuple[str, ...]) -> str:
    return ", ".join("START" if n == "__start__" else n for n in nodes)
