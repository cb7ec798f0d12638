"""Record every call a graph makes to the outside world, with the node that made it.

:class:`RecordingWorld` stands in for a :class:`~course.world.World` in front of a
graph builder. Its ``billing``, ``mail`` and ``webhook`` forward every call to the
real ones; the calls that act on the world (:data:`EFFECTS`) also append one
JSON line to a log file once they return: which node made the call (LangGraph's
``langgraph_node`` from the running config), the receiver, the key sent (or
none), whether the receiver answered ``replayed`` (it served a stored result
instead of acting again), and the process id. The line is written with one
unbuffered ``write``, so a SIGKILL right after it loses nothing, and a forked
worker appends to the same file as its parent.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

EFFECTS: dict[tuple[str, str], tuple[str, str]] = {
    # (part of the world, method) -> (receiver shown in the table, name of its key argument)
    ("billing", "charge"): ("billing.charge", "idempotency_key"),
    ("billing", "refund"): ("billing.refund", "idempotency_key"),
    ("billing", "change_subscription"): ("billing.subscription", "idempotency_key"),
    ("mail", "send"): ("mail.send", "email_id"),
    ("webhook", "post"): ("webhook.post", "idempotency_key"),
}
HONOURS_KEYS = {"billing.charge", "billing.refund", "billing.subscription", "mail.send"}
"""Receivers that deduplicate on the key; the partner webhook takes a key and ignores it."""


def current_node() -> str:
    """The LangGraph node running this call, or ``"-"`` outside a graph."""
    try:
        from langgraph.config import get_config

        return str(get_config().get("metadata", {}).get("langgraph_node", "-"))
    except RuntimeError:  # not inside a runnable
        return "-"


class _RecordingPart:
    def __init__(self, part_name: str, part: Any, log: Path) -> None:
        self._part_name, self._part, self._log = part_name, part, log

    def __getattr__(self, name: str) -> Any:
        target = getattr(self._part, name)
        effect = EFFECTS.get((self._part_name, name))
        if effect is None or not callable(target):
            return target
        receiver, key_arg = effect

        def recorded(*args: Any, **kwargs: Any) -> Any:
            result = target(*args, **kwargs)
            replayed = bool(result.get("replayed")) if isinstance(result, dict) else False
            line = {"pid": os.getpid(), "node": current_node(), "receiver": receiver,
                    "key": kwargs.get(key_arg), "replayed": replayed}
            fd = os.open(self._log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(fd, (json.dumps(line) + "\n").encode())
            finally:
                os.close(fd)
            return result

        return recorded


class RecordingWorld:
    """A world whose effects are logged to ``log``; everything else is the world itself."""

    def __init__(self, world: Any, log: str | Path) -> None:
        self._world = world
        self._log = Path(log)
        self.billing = _RecordingPart("billing", world.billing, self._log)
        self.mail = _RecordingPart("mail", world.mail, self._log)
        self.webhook = _RecordingPart("webhook", world.webhook, self._log)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._world, name)


def read_calls(log: str | Path) -> list[dict[str, Any]]:
    """Every call logged so far, in order."""
    try:
        text = Path(log).read_text()
    except FileNotFoundError:
        return []
    return [json.loads(line) for line in text.splitlines() if line.strip()]
