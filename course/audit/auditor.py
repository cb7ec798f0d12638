"""The idempotency audit: crash a graph at every node and point, list every side effect.

:func:`audit` runs a graph builder ``builder(world, checkpointer)`` under the
crash harness (:class:`course.crash.CrashHarness`, real SIGKILLs, resume in a
new process): first once without a crash, to learn which effects a run makes,
then once per reached node and crash point. Every call to the outside world is
logged by :class:`~course.audit.recorder.RecordingWorld`, so for each effect
(node, receiver) the report says:

- the key it was sent with (the thread id shown as ``<thread>``), or none;
- what happened when its node ran again on resume after the effect had landed:
  ``sent again`` (a second real effect), ``receiver replayed`` (the receiver
  saw the key and served its first answer), ``not re-sent`` (the node skipped
  the call, e.g. the guard's record), or ``never re-run``;
- the crash points at which a crash made the effect happen more than in the
  crash-free run (``repeatable``).

:meth:`AuditReport.summary` is the one-line verdict
``effects=<n> keyed=<k> repeatable=<r>``.
"""

from __future__ import annotations

import tempfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver

from course.audit.recorder import RecordingWorld, read_calls
from course.base import crashpoints
from course.base.table import Table
from course.crash.harness import CrashHarness, ScenarioResult, resolve_factory
from course.world import World

EFFECTS_LOG = "effects.log"
EffectId = tuple[str, str]  # (node, receiver)


class AuditError(Exception):
    """The audit could not run; the message is one line a person can act on."""


@dataclass
class Effect:
    node: str
    receiver: str
    key: str  # as sent in the crash-free run, thread id shown as <thread>; "(none)" without
    keyed: bool
    on_resume: str = "never re-run"
    repeated_at: list[str] = field(default_factory=list)  # "node/point" of crashes that repeat it
    key_changed: bool = False  # a re-run sent a different key: the receiver cannot deduplicate

    @property
    def repeatable(self) -> bool:
        return bool(self.repeated_at)

    def row(self) -> dict[str, Any]:
        return {"node": self.node, "receiver": self.receiver,
                "key": self.key + (" (changes on re-run!)" if self.key_changed else ""),
                "replayed on resume?": self.on_resume,
                "can a crash repeat it?": ("YES: " + ", ".join(self.repeated_at)
                                           if self.repeated_at else "no")}


@dataclass
class AuditReport:
    graph: str
    effects: list[Effect]
    scenarios: list[ScenarioResult]
    problems: list[str]  # scenarios that ended in an error or a kill that did not land

    @property
    def keyed(self) -> int:
        return sum(e.keyed for e in self.effects)

    @property
    def repeatable(self) -> int:
        return sum(e.repeatable for e in self.effects)

    def table(self) -> Table:
        return Table([e.row() for e in self.effects],
                     ["node", "receiver", "key", "replayed on resume?", "can a crash repeat it?"],
                     title=f"idempotency audit: {self.graph} "
                           f"({len(self.scenarios)} crash scenarios, real SIGKILLs)")

    def summary(self) -> str:
        return f"effects={len(self.effects)} keyed={self.keyed} repeatable={self.repeatable}"

    def __str__(self) -> str:
        lines = [str(self.table())] + [f"note: {p}" for p in self.problems]
        return "\n".join([*lines, self.summary()])

    def _repr_html_(self) -> str:
        notes = "".join(f"<p>note: {p}</p>" for p in self.problems)
        return self.table()._repr_html_() + notes + f"<pre>{self.summary()}</pre>"


def check_builder(builder: Callable[..., Any] | str) -> Callable[..., Any]:
    """Resolve ``builder`` and build it once on a scratch world; raise :class:`AuditError`
    (one line) for no such module or function, a builder that raises, or a graph
    compiled without the checkpointer it was given."""
    try:
        factory = resolve_factory(builder)
    except ModuleNotFoundError as error:
        raise AuditError(f"cannot audit {builder!r}: no module named {error.name!r} "
                         "(check the spelling, and run it from the module's folder or put "
                         "that folder on PYTHONPATH)") from None
    except ValueError as error:
        raise AuditError(f"cannot audit: {error}") from None
    except Exception as error:
        raise AuditError(f"cannot audit {builder!r}: importing it raised "
                         f"{type(error).__name__}: {error}") from None
    name = builder if isinstance(builder, str) else getattr(builder, "__name__", "graph")
    with tempfile.TemporaryDirectory(prefix="audit-check-") as scratch:
        world = World(scratch)
        try:
            graph = factory(world, InMemorySaver())
        except Exception as error:
            raise AuditError(f"the builder {name} raised {type(error).__name__}: "
                             f"{str(error).splitlines()[0] if str(error) else ''}") from None
        finally:
            world.close()
    if not hasattr(graph, "invoke"):
        raise AuditError(f"the builder {name} returned {type(graph).__name__}, not a compiled "
                         "graph: return builder.compile(checkpointer=checkpointer)")
    if getattr(graph, "checkpointer", None) in (None, False):
        raise AuditError(f"the graph from {name} has no checkpointer: compile it with the "
                         "checkpointer the builder is given, or a crash loses the whole run")
    return factory


def audit(builder: Callable[..., Any] | str, *, root: str | Path | None = None,
          points: tuple[str, ...] | None = None) -> AuditReport:
    """Crash ``builder``'s graph at every node it reaches and every crash point; see the module."""
    factory = check_builder(builder)
    name = builder if isinstance(builder, str) else getattr(builder, "__name__", "graph")

    def recorded(world: World, checkpointer: Any) -> Any:
        return factory(RecordingWorld(world, world.directory / EFFECTS_LOG), checkpointer)

    recorded.__name__ = name
    harness = CrashHarness(recorded, root=root)
    clean = harness.run()
    if clean.status != "completed":
        raise AuditError(f"the graph from {name} does not finish even without a crash: "
                         f"{clean.verdict}")
    nodes = list(dict.fromkeys(node for node, point in clean.attempts[0].reached
                               if point == "before_effect"))
    if not nodes:
        raise AuditError(f"no crash point was reached in the graph from {name}: build it with "
                         "course.cloudwave.build_graph so its nodes can be crashed")
    baseline_calls = read_calls(clean.run_dir / EFFECTS_LOG)
    baseline = Counter((c["node"], c["receiver"]) for c in baseline_calls if not c["replayed"])
    effects: dict[EffectId, Effect] = {}
    for call in baseline_calls:
        found = (call["node"], call["receiver"])
        if found not in effects:
            key = call["key"]
            shown = "(none)" if key is None else str(key).replace(clean.thread_id, "<thread>")
            effects[found] = Effect(call["node"], call["receiver"], shown, key is not None)
    scenarios, problems = [], []
    reached = set(clean.attempts[0].reached)  # only a node that calls guarded has before_record
    for node in nodes:
        for point in points or crashpoints.POINTS:
            if points is None and (node, point) not in reached:
                continue
            result = harness.run(node, point)
            scenarios.append(result)
            if (node, point) not in result.attempts[0].reached or not result.kill_landed:
                problems.append(f"the kill at {node}/{point} did not land")
                continue
            if result.status != "completed":
                problems.append(f"after a kill at {node}/{point}: {result.verdict}")
            _judge(result, effects, baseline)
    return AuditReport(name, list(effects.values()), scenarios, problems)


_ORDER = ["never re-run", "not re-sent", "receiver replayed", "sent again"]


def _judge(result: ScenarioResult, effects: dict[EffectId, Effect], baseline: Counter) -> None:
    """Fold one crash scenario into the effects' verdicts."""
    calls = read_calls(result.run_dir / EFFECTS_LOG)
    landed = set(result.attempts[0].reached)
    reran = {node for attempt in result.attempts[1:] for node, point in attempt.reached
             if point == "before_effect"}
    where = f"{result.node}/{result.point}"
    for found, effect in effects.items():
        mine = [c for c in calls if (c["node"], c["receiver"]) == found]
        new = sum(not c["replayed"] for c in mine)
        if new > baseline[found]:
            effect.repeated_at.append(where)
        if len({c["key"] for c in mine}) > 1:
            effect.key_changed = True
        if (effect.node, "after_effect") in landed and effect.node in reran:
            if new > baseline[found]:
                seen = "sent again"
            elif any(c["replayed"] for c in mine):
                seen = "receiver replayed"
            else:
                seen = "not re-sent"
            if _ORDER.index(seen) > _ORDER.index(effect.on_resume):
                effect.on_resume = seen
