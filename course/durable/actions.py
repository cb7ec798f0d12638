"""Carry out a recovery: resume, branch or abandon a LangGraph thread, for real.

:func:`course.durable.recovery.select_recovery` decides; this module acts:

- :func:`resume`: settle every step the guard left in flight for the thread
  (ask the provider about its key, :func:`course.durable.guard.reconcile`),
  then ``graph.invoke(None, config)`` on the same thread: finished nodes are
  not run again, the interrupted one runs from its first line.
- :func:`branch`: ``update_state`` on a *past* checkpoint's config writes a new
  checkpoint whose parent is that past one: a fork. The thread's current head
  moves to the fork; every checkpoint that was already there stays, unchanged
  (:func:`history` lists them, so a test can compare before and after).
- :func:`abandon`: settle in-flight steps first (so a charge that landed is
  recorded, not forgotten), then ``delete_thread`` (cannot be undone; it leaves
  the guard's records and any replay log alone), or, when the checkpoint file
  is itself corrupt, :func:`quarantine` it, and tell the customer.

Generic: the caller passes the graph, the idempotency store and the
provider's ``lookup(key)``; nothing here knows CloudWave.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from course.base import shown_path
from course.durable.guard import reconcile
from course.durable.idempotency import IdempotencyStore

Lookup = Callable[[str], Any]


def thread_config(thread_id: str, **metadata: Any) -> dict[str, Any]:
    config: dict[str, Any] = {"configurable": {"thread_id": thread_id}}
    if metadata:
        config["metadata"] = metadata
    return config


def in_flight(store: IdempotencyStore, thread_id: str) -> list[str]:
    """The steps of ``thread_id`` whose intent is recorded and whose result is not."""
    prefix = f"{thread_id}:"
    return [r.record_id[len(prefix):] for r in store.records()
            if r.record_id.startswith(prefix) and r.status == "in_flight"]


def settle(store: IdempotencyStore | None, lookup: Lookup | None,
           thread_id: str) -> dict[str, str]:
    """Reconcile every in-flight step of the thread: ``{step: "landed" | "not_landed"}``."""
    if store is None:
        return {}
    if lookup is None:
        raise ValueError("settling in-flight steps needs lookup(key): how to ask the provider")
    return {step: reconcile(thread_id, step, store=store, lookup=lookup)
            for step in in_flight(store, thread_id)}


def resume(graph: Any, config: dict[str, Any], *, store: IdempotencyStore | None = None,
           lookup: Lookup | None = None) -> dict[str, Any]:
    """Settle in-flight steps, then continue the same thread from its last checkpoint."""
    if graph.get_state(config).created_at is None:
        raise ValueError(f"thread {config['configurable']['thread_id']!r} has no checkpoint: "
                         "there is nothing to resume (start it with its input instead)")
    settle(store, lookup, config["configurable"]["thread_id"])
    return graph.invoke(None, config, durability="sync")


def history(graph: Any, config: dict[str, Any]) -> list[tuple[str, tuple[str, ...], dict]]:
    """Every checkpoint of the thread, newest first: (checkpoint id, next nodes, values)."""
    return [(s.config["configurable"]["checkpoint_id"], tuple(s.next), dict(s.values))
            for s in graph.get_state_history(config)]


def checkpoint_before(graph: Any, config: dict[str, Any], node: str) -> dict[str, Any]:
    """The config of the newest checkpoint on the thread's current branch where ``node``
    was about to run: from ``config``'s checkpoint back through its parents, so a fork's
    abandoned branch is never returned (``get_state_history`` lists every branch).

    Raises ``ValueError`` when no checkpoint of that branch has ``node`` next."""
    snapshot = graph.get_state(config)
    while snapshot is not None and snapshot.config is not None:
        if node in snapshot.next:
            return snapshot.config
        parent = snapshot.parent_config
        snapshot = graph.get_state(parent) if parent is not None else None
    raise ValueError(f"no checkpoint of thread {config['configurable']['thread_id']!r} "
                     f"is just before {node!r}")


def branch(graph: Any, past_config: dict[str, Any], values: dict[str, Any] | None = None, *,
           as_node: str | None = None) -> dict[str, Any]:
    """Fork from a past checkpoint: write ``values`` on top of it; return the fork's config.
    Continue it with ``graph.invoke(None, fork_config)``."""
    if "checkpoint_id" not in past_config.get("configurable", {}):
        raise ValueError("branch needs a past checkpoint's config (with a checkpoint_id): "
                         "take it from get_state_history or checkpoint_before")
    return graph.update_state(past_config, values or {}, as_node=as_node)


@dataclass
class Abandoned:
    thread_id: str
    settled: dict[str, str]  # in-flight step -> landed / not_landed
    checkpoints: str  # "deleted" or "quarantined to <path>"
    message: str  # what the customer was told
    kept: list[str] = field(default_factory=list)  # what was left as evidence


def quarantine(path: str | Path) -> Path:
    """Move a damaged checkpoint file (and its -wal/-shm) aside, never overwrite; return where."""
    path = Path(path)
    for n in itertools.count(1):
        target = path.with_name(f"{path.name}.corrupt-{n}")
        if not target.exists():
            break
    path.rename(target)
    for suffix in ("-wal", "-shm"):
        side = path.with_name(path.name + suffix)
        if side.exists():
            side.rename(target.with_name(target.name + suffix))
    return target


def abandon(thread_id: str, *, checkpointer: Any = None, corrupt_file: str | Path | None = None,
            store: IdempotencyStore | None = None, lookup: Lookup | None = None,
            tell_customer: Callable[[str], Any], reason: str) -> Abandoned:
    """Stop the thread for good: settle in flight, drop its checkpoints, tell the customer.

    Give ``checkpointer`` (``delete_thread``) or, when the checkpoint file is what is
    broken, ``corrupt_file`` (moved aside as evidence: a broken file cannot be edited)."""
    if (checkpointer is None) == (corrupt_file is None):
        raise ValueError("abandon needs exactly one of checkpointer= or corrupt_file=")
    settled = settle(store, lookup, thread_id)
    if corrupt_file is not None:
        where = f"quarantined to {shown_path(quarantine(corrupt_file))}"
    else:
        checkpointer.delete_thread(thread_id)
        where = "deleted"
    landed = [step for step, outcome in settled.items() if outcome == "landed"]
    message = (f"We stopped working on your request ({reason}). "
               + (f"Already done and kept: {', '.join(landed)}. " if landed else "")
               + "A person will follow up; you will not be charged twice.")
    tell_customer(message)
    kept = ["idempotency records"] if store is not None else []
    return Abandoned(thread_id, settled, where, message, kept)
