"""Replay records: what each step of an agent run saw, called and got back.

A checkpoint says where a run is; it does not say which model produced it or
what that model was shown. A :class:`ReplayRecord` does, one per step:

- ``step``, ``node``: where in the run;
- ``model_name``, ``model_version``: who decided (a run resumed by a newer
  deployment changes version between two steps);
- ``transcript_hash``: :func:`transcript_hash` of the messages the model saw,
  so a replay can prove it is looking at the same conversation;
- ``tool_calls`` (name and arguments) and ``tool_results``: the inputs and
  outputs of every tool the step ran.

:class:`ReplayLog` appends records to a JSON-lines file, one unbuffered write
and an ``fsync`` per record, so a SIGKILL loses at most the step being written,
and the log outlives ``delete_thread`` (it is evidence, not state).
:func:`model_changes` finds where the model changed under a run;
:func:`replay_tools` re-runs recorded tool inputs through (fixed) tools offline
and compares what they do with what was recorded. :func:`model_metadata` is the
dictionary to put in ``config["metadata"]``: LangGraph copies simple metadata
values into every checkpoint's metadata, so the checkpoints carry them too.

Generic: nothing here knows CloudWave (see :mod:`course.cloudwave.agent`).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from course.base.table import Table

REQUIRED = ("step", "node", "model_name", "model_version", "transcript_hash")


def message_dict(message: Any) -> dict[str, Any]:
    """A message (LangChain object or plain dict) as a plain, comparable dict."""
    if isinstance(message, Mapping):
        found = dict(message)
        return {"type": str(found.get("type", found.get("role", ""))),
                "content": found.get("content", ""),
                "tool_calls": [{"name": c["name"], "args": c["args"]}
                               for c in found.get("tool_calls") or []]}
    return {"type": str(getattr(message, "type", type(message).__name__)),
            "content": getattr(message, "content", str(message)),
            "tool_calls": [{"name": c["name"], "args": c["args"]}
                           for c in getattr(message, "tool_calls", None) or []]}


def transcript_hash(messages: Iterable[Any]) -> str:
    """SHA-256 of the conversation as the model saw it: type, text and tool calls of every
    message, in order (message ids and timings are left out: they differ between runs)."""
    canonical = json.dumps([message_dict(m) for m in messages], sort_keys=True,
                           separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


@dataclass(frozen=True)
class ReplayRecord:
    step: int
    node: str
    model_name: str
    model_version: str
    transcript_hash: str
    tool_calls: list[dict[str, Any]] = field(default_factory=list)  # [{"name", "args"}]
    tool_results: list[Any] = field(default_factory=list)
    reply: str = ""  # the model's text, when it answered instead of calling a tool

    def __post_init__(self) -> None:
        for name in REQUIRED:
            value = getattr(self, name)
            if value in (None, "") or (name == "step" and not isinstance(value, int)):
                raise ValueError(f"a replay record needs {name}; got {value!r}")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ReplayRecord:
        missing = [name for name in REQUIRED if name not in data]
        if missing:
            raise ValueError(f"not a replay record: it has no {', '.join(missing)}")
        known = {name: data[name] for name in cls.__dataclass_fields__ if name in data}
        return cls(**known)


def model_metadata(model_name: str, model_version: str, **more: str) -> dict[str, str]:
    """The ``config["metadata"]`` that makes every checkpoint carry the model's identity."""
    return {"model_name": model_name, "model_version": model_version, **more}


class ReplayLog:
    """An append-only JSON-lines file of :class:`ReplayRecord`, shared by every process."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)

    def append(self, record: ReplayRecord | Mapping[str, Any]) -> ReplayRecord:
        if not isinstance(record, ReplayRecord):
            record = ReplayRecord.from_dict(record)
        line = json.dumps(record.to_dict(), sort_keys=True, default=str) + "\n"
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line.encode())
            os.fsync(fd)
        finally:
            os.close(fd)
        return record

    def records(self) -> list[ReplayRecord]:
        """Every record, in the order written. A line cut short by a kill is skipped."""
        try:
            lines = self.path.read_text().splitlines()
        except FileNotFoundError:
            return []
        found = []
        for line in lines:
            try:
                found.append(ReplayRecord.from_dict(json.loads(line)))
            except (json.JSONDecodeError, ValueError):
                continue
        return found

    def __iter__(self):
        return iter(self.records())

    def __len__(self) -> int:
        return len(self.records())


@dataclass(frozen=True)
class ModelChange:
    step: int
    before: str  # "name version"
    after: str


def model_changes(records: Iterable[ReplayRecord | Mapping[str, Any]]) -> list[ModelChange]:
    """Every step whose model (name or version) differs from the step before it."""
    changes, previous = [], None
    for record in _as_records(records):
        model = f"{record.model_name} {record.model_version}"
        if previous is not None and model != previous:
            changes.append(ModelChange(record.step, previous, model))
        previous = model
    return changes


def model_changed_at(records: Iterable[ReplayRecord | Mapping[str, Any]]) -> int | None:
    """The first step run by another model than the step before it, or ``None``."""
    changes = model_changes(records)
    return changes[0].step if changes else None


def replay_table(records: Iterable[ReplayRecord | Mapping[str, Any]]) -> Table:
    """One row per recorded step: the plain-data face of the replay widget."""
    rows = []
    for r in _as_records(records):
        calls = "; ".join(f"{c['name']}({_short(c.get('args', {}))})" for c in r.tool_calls)
        rows.append({"step": r.step, "node": r.node, "model": r.model_name,
                     "version": r.model_version, "transcript": r.transcript_hash[:12],
                     "tool calls": calls or "-",
                     "results": "; ".join(_short(x) for x in r.tool_results) or r.reply or "-"})
    return Table(rows, ["step", "node", "model", "version", "transcript", "tool calls", "results"],
                 title="replay")


Tool = Callable[..., Any]


def replay_tools(records: Iterable[ReplayRecord | Mapping[str, Any]],
                 tools: Mapping[str, Tool]) -> Table:
    """Run every recorded tool call again, offline, through ``tools[name](**args)``, in the
    recorded order; one row per call with the recorded and the replayed result.

    The tools are whatever you pass: the fixed versions, bound to a scratch world,
    so the question "would the fix have done the same on what really happened?"
    is answered on the real sequence of inputs, not on a test you made up."""
    rows = []
    for record in _as_records(records):
        results = list(record.tool_results) + [None] * len(record.tool_calls)
        for call, recorded in zip(record.tool_calls, results, strict=False):
            tool = tools.get(call["name"])
            if tool is None:
                raise KeyError(f"step {record.step} called tool {call['name']!r}, which the "
                               f"replay was not given (it has {', '.join(tools) or 'none'})")
            try:
                replayed: Any = tool(**call.get("args", {}))
            except Exception as error:  # the replay shows it, as the incident did
                replayed = {"error": f"{type(error).__name__}: {error}"}
            rows.append({"step": record.step, "tool": call["name"], "args": call.get("args", {}),
                         "recorded": recorded, "replayed": replayed})
    return Table(rows, ["step", "tool", "args", "recorded", "replayed"], title="replay of tools")


def _as_records(records: Iterable[ReplayRecord | Mapping[str, Any]]) -> list[ReplayRecord]:
    return [r if isinstance(r, ReplayRecord) else ReplayRecord.from_dict(r) for r in records]


def _short(value: Any, width: int = 60) -> str:
    text = json.dumps(value, sort_keys=True, default=str) if not isinstance(value, str) else value
    return text if len(text) <= width else text[: width - 1] + "…"
