"""``python -m course.crash fuzz --kills N --seed S [--graph keyed|naive|module:factory]``

The crash matrix kills a worker at named points. The fuzzer kills it at
*random instants*: anywhere in a node, inside the billing call, between the
guard's intent and its result, in the middle of a checkpoint write, while the
process is still opening its files. Each kill is a real SIGKILL from the
parent; the run is then resumed until it completes (a worker that stops on
``NeedsReconcile`` is reconciled by the harness and resumed again), and the
ledger is read.

What it promises:

- **Reproducible by seed.** The planned instants are a pure function of the
  seed, the number of kills and a :class:`Profile` (how long an unkilled
  worker lives, where its graph runs, when it passes each point): :func:`plan`. The profile is
  measured first (a few unkilled runs per lane) and printed. A machine's pace
  drifts while it fuzzes, so with a measured profile each lane sets its timer
  to the planned instant *relative to* its workers' current life (an unkilled
  probe every :data:`PROBE_EVERY` kills keeps that up to date). Pass the
  profile back with ``--profile`` and the timers are exactly the planned
  delays, in seconds. Outcomes can still differ between two runs, because a
  worker's own speed varies; the plan does not.
- **Random instants, aimed at the windows where doubles are born.** The
  calibration also measures when a typical worker passes each crash point
  (and the marks ``run/started``, the guard's ``after_intent`` and the
  provider's ``effect_landed``), which cuts the run into *windows*
  (:func:`windows_of`): per node, the time in it and the time its checkpoint
  takes; for a guarded node, the guard's four (before the intent is recorded,
  intent recorded and the effect not landed, the effect landed and its result
  not recorded, the node's checkpoint). Each draw picks a window, then a
  uniform instant inside it; :data:`START_SHARE` of the draws fall in start-up
  and :data:`TAIL_SHARE` after the graph (up to 15 % past a typical end, so
  some timers fire after the worker finished: those kills do not land and are
  reported). A worker's start-up alone varies by more than a window is long, so
  each timer is set again from the last point the worker passes at least
  :data:`AIM_LEAD_S` before the instant (see ``aim`` in
  :mod:`course.crash.harness`). The last line reports the coverage:
  ``windows=<n> in_windows=<percent of kills inside them> min_window=<the
  least-hit window's percent>``. With a pinned ``--profile`` (no points), the
  draws are the old ones: uniform over the whole life, or over the graph's run.
- **Counts real kills.** ``--kills N`` means N SIGKILLs that landed: a timer
  that fires after its worker finished killed nothing, so more instants are
  drawn (the same seeded sequence, continued) until N landed. The last line is
  exactly ``kills=<n> double_charges=<d> double_emails=<e> lost=<l>
  reconciled=<r> windows=<w> in_windows=<p> min_window=<m>``; the line before it
  says how many timers that took, how fast it ran, and after how many kills the
  first double came (``first_double=``). A table
  shows where the kills landed (after which crash point) and what they caused.
- **Fast.** Scenarios run in parallel lanes (one per core), each lane a
  process forked from this warm one, each worker forked from its lane.
- **Kills after the first one, and freezes.** About a third of the scenarios
  also get a follow-up SIGKILL in a later stage: a resumer, or the parent's
  reconciliation (then run in a forked child). With ``--fault pause``, half of
  the first interruptions are a freeze instead of a kill: the worker gets
  SIGSTOP at the planned instant and SIGCONT up to :data:`PAUSE_MAX_S` later,
  while the resumers already work on its thread (a paused worker is not dead:
  it wakes up and carries on). Both are a pure function of the seed too
  (:func:`plan_faults`). ``--kills N`` then counts first interruptions that
  landed (kills and pauses); the last line gains ``pauses=<p>``. Follow-up
  kills are counted on the line before it (``follow_up_kills=``).

Where the files live: by default in RAM (``/dev/shm``) when it has room. That
does not weaken what is tested. A SIGKILL ends the process, not the machine:
what a committed SQLite transaction wrote is in the kernel's page cache,
whether the file is on ext4 or tmpfs, and the next process reads it back the
same way. SQLite still runs WAL with ``synchronous=FULL`` and LangGraph
``durability="sync"``; only their ``fsync`` calls cost nothing in RAM. What
tmpfs cannot show is a power cut, and no test here cuts the power (on disk
neither). ``--root DIR`` runs on the disk you name instead (``python -m
bench`` measures both).
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import resource
import selectors
import shutil
import statistics
import sys
import tempfile
import time
import traceback
from collections import deque
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tqdm import tqdm

from course.base import fork
from course.base.crashpoints import RUN
from course.base.table import Table
from course.crash.harness import CrashHarness, EffectVerdicts, ScenarioResult, resolve_factory

OVERSHOOT = 1.15  # uniform draws reach this far past the typical end of a worker
BIAS = 0.8  # share of draws inside the window where the graph runs (most kills hit nodes)
CALIBRATION_RUNS = 3  # unkilled runs per lane to measure the profile
RAM_DIR = Path("/dev/shm")
RAM_MIN_FREE = 256 * 1024 * 1024
STARTUP = "start-up (before any node)"
NOT_LANDED = "not landed (worker had finished)"
MAX_DRAW_ROUNDS = 30  # rounds of redrawing timers that fired too late, before giving up
PROBE_EVERY = 8  # with pacing on, one unkilled probe run per lane every this many kills
KEEP_FAILED = 20  # failing run directories kept under --root for inspection
FAULTS = ("kill", "pause")
FOLLOW_UP = 0.3  # share of scenarios with a second SIGKILL in a later stage
PAUSE_SHARE = 0.5  # with --fault pause: share of first interruptions that freeze, not kill
PAUSE_MAX_S = 0.25  # a freeze lasts up to this long (the provider's hold is 50 ms)
START_SHARE = 0.05  # aimed draws in start-up (before the first node)
TAIL_SHARE = 0.05  # aimed draws after the graph's last checkpoint (some past the worker's end)
AIM_LEAD_S = 0.0  # a timer is set again from the last point passed at least this long before
# (0: the point that starts the instant's own stretch; how late this process hears of it
# then decides, and a kill that comes late lands later in the run, never earlier)
AIM_FALLBACK_SPANS = 5  # an aimed timer's fallback: this many typical lives after its instant
AFTER = "after the graph (last checkpoint written)"


@dataclass(frozen=True)
class Profile:
    """How an unkilled worker of this graph lives, in seconds from the moment it starts
    running (just after ``fork``; see :func:`course.crash.harness._started`)."""

    span_s: float  # typical life, start to exit
    window: tuple[float, float]  # first to last durable checkpoint: where the graph runs
    marks: tuple[float, ...] = ()  # every checkpoint of a typical run (when they agree)
    points: tuple[tuple[str, float], ...] = ()  # ("node/point", when), a typical run's trail
    shortest: tuple[float, ...] = ()  # per point: the shortest time to the next one seen

    def windows(self) -> list[Window]:
        """The windows of a typical run, with their times (empty without ``points``)."""
        return windows_of(self.points, self.span_s)

    def aim(self, delay: float) -> tuple[str, float] | None:
        """The point to time a kill at ``delay`` from, and the offset after it: the last
        point a typical worker passes at least :data:`AIM_LEAD_S` before (or, closer to the
        start, the first point); ``None`` (time it from the start) before the first."""
        before = [i for i, (_, at) in enumerate(self.points) if at <= delay - AIM_LEAD_S]
        before = before or [i for i, (_, at) in enumerate(self.points) if at <= delay][:1]
        if not before:
            return None
        i = before[-1]
        label, at = self.points[i]
        offset = delay - at
        # the instant's place in the stretch to the next point, scaled to the shortest
        # that stretch was seen to last: an offset past a quick run's next point lands in
        # the next window
        typical = (self.points[i + 1][1] if i + 1 < len(self.points) else self.span_s) - at
        if i < len(self.shortest) and 0 < self.shortest[i] < typical and offset < typical:
            offset *= self.shortest[i] / typical
        return label, round(offset, 7)

    def __post_init__(self) -> None:
        lo, hi = self.window
        if not (self.span_s > 0 and 0 <= lo <= hi):
            raise ValueError(f"a profile needs span > 0 and 0 <= from <= to, got {self}")

    def describe(self) -> str:
        lo, hi = self.window
        aimed = f", {len(self.windows())} windows" if self.points else ""
        return (f"span {self.span_s * 1000:.1f} ms, graph runs {lo * 1000:.1f}-{hi * 1000:.1f} ms"
                f"{aimed} (pin with --profile {self.as_arg()})")

    def as_arg(self) -> str:
        return ",".join(f"{v * 1000:.1f}" for v in (self.span_s, *self.window))

    @classmethod
    def parse(cls, text: str) -> Profile:
        """``"SPAN_MS,FROM_MS,TO_MS"`` (or just ``"SPAN_MS"``: the window is the whole span)."""
        try:
            values = [float(v) / 1000 for v in text.split(",")]
        except ValueError:
            values = []
        if len(values) == 1:
            values = [values[0], 0.0, values[0]]
        if len(values) != 3:
            raise ValueError(f"--profile wants SPAN_MS,FROM_MS,TO_MS (milliseconds), got {text!r}")
        return cls(values[0], (values[1], values[2]))


@dataclass(frozen=True)
class Window:
    """A stretch of a typical run a kill can land in, and the zones (last point passed)
    that say a kill landed there."""

    name: str  # "charge: intent recorded, provider not answered"
    zones: tuple[str, ...]
    lo: float = 0.0  # seconds after the worker starts, in a typical run
    hi: float = 0.0


def windows_of(points: tuple[tuple[str, float], ...] | list[str],
               span_s: float = 0.0) -> list[Window]:
    """The windows of a run whose trail is ``points`` (``("node/point", when)`` pairs, or
    the labels alone, then without times), in order: per node, the time in it and its
    checkpoint (``after_effect`` to ``after_checkpoint``). The time in a node that calls
    the provider (its ``effect_landed`` mark) is cut in two: before the effect lands, and
    after it, the node not finished; in a node the guard wraps (its ``after_intent``
    mark) in three: before the intent is recorded, the intent recorded and the effect
    not landed, the effect landed and its result not recorded.
    The time between a node's checkpoint and the next node is the next node's, and so is
    the time from ``run/started`` to the first node (LangGraph writes the run's first
    checkpoints then: that window is named so); the time after the last checkpoint is
    :data:`AFTER`, not a window."""
    timed = [(p, None) if isinstance(p, str) else p for p in points]
    nodes = list(dict.fromkeys(label.split("/")[0] for label, _ in timed
                               if not label.startswith(f"{RUN}/")))
    guarded = {label.split("/")[0] for label, _ in timed if label.endswith("/after_intent")}
    effects = {label.split("/")[0] for label, _ in timed if label.endswith("/effect_landed")}
    names: list[str] = []
    zone_to: dict[str, str] = {}
    for label, _ in timed:
        node, point = label.split("/", 1)
        if node == RUN:  # the run's first checkpoints: the first node's time
            if not nodes:
                continue
            node, point = nodes[0], "before_effect"
        elif point == "after_checkpoint":
            later = nodes.index(node) + 1
            if later == len(nodes):
                zone_to[label] = AFTER
                continue
            node, point = nodes[later], "before_effect"  # planning the next node's step
        landed = ("effect landed, result not recorded" if node in guarded
                  else "effect landed, node not finished")
        first = node == nodes[0] and any(label.startswith(f"{RUN}/") for label, _ in timed)
        name = {"before_effect": "before the intent is recorded" if node in guarded
                else "before the effect lands" if node in effects
                else "the run's first checkpoints and the node" if first else "in the node",
                "after_intent": "intent recorded, effect not landed",
                "effect_landed": landed, "before_record": landed,
                }.get(point, "its checkpoint")
        zone_to[label] = f"{node}: {name}"
        if zone_to[label] not in names:
            names.append(zone_to[label])
    found = []
    for name in names:
        spans = [(at, timed[i + 1][1] if i + 1 < len(timed) else span_s)
                 for i, (label, at) in enumerate(timed) if zone_to.get(label) == name]
        zones = tuple(label for label, _ in timed if zone_to.get(label) == name)
        if all(at is not None for at, _ in spans):
            found.append(Window(name, zones, spans[0][0], spans[-1][1]))
        else:
            found.append(Window(name, zones))
    return found


def window_of(zone: str, windows: list[Window]) -> str:
    """The window a kill whose zone is ``zone`` landed in (a freeze's too); otherwise
    :data:`AFTER` for the last checkpoint, or the zone itself (start-up, not landed)."""
    zone = zone.removeprefix("paused in ")
    found = next((w.name for w in windows if zone in w.zones), None)
    if found is None and zone.endswith("/after_checkpoint"):
        return AFTER
    return found or zone


def plan(seed: int, kills: int, profile: Profile, *, bias: float = BIAS,
         aim: bool = True) -> list[float]:
    """The kill delays in seconds after the worker starts: same arguments, same list.

    With the profile's points, aimed (see the module's docstring); without them, or with
    ``aim=False``, a share ``bias`` uniform over the graph's run and the rest over the
    whole life."""
    if kills < 0:
        raise ValueError(f"kills must be >= 0, got {kills}")
    rng = random.Random(seed)
    windows = profile.windows() if aim else []
    first = profile.points[0][1] if profile.points else 0.0
    last = max((w.hi for w in windows), default=0.0)
    delays = []
    for _ in range(kills):
        draw = rng.random()
        if not windows:
            lo, hi = profile.window if draw < bias else (0.0, profile.span_s * OVERSHOOT)
        elif draw < START_SHARE:
            lo, hi = 0.0, first
        elif draw < START_SHARE + TAIL_SHARE:
            lo, hi = last, profile.span_s * OVERSHOOT
        else:
            window = windows[rng.randrange(len(windows))]
            lo, hi = window.lo, window.hi
        delays.append(round(rng.uniform(lo, hi), 7))
    return delays


@dataclass(frozen=True)
class Faults:
    """What a scenario gets besides its first timer: a freeze instead of the kill, and a
    follow-up kill ``(stage, delay_s)`` in a later stage (a resumer or a reconciliation)."""

    pause_for_s: float | None = None
    then_kill: tuple[int, float] | None = None

    def as_text(self) -> str:
        return json.dumps([self.pause_for_s, self.then_kill])

    @classmethod
    def parse(cls, text: str) -> Faults:
        pause, then = json.loads(text)
        return cls(pause, tuple(then) if then else None)


def plan_faults(seed: int, count: int, profile: Profile, fault: str = "kill") -> list[Faults]:
    """The extra faults of the first ``count`` scenarios: same arguments, same list (a
    longer list starts with the shorter one)."""
    if fault not in FAULTS:
        raise ValueError(f"unknown fault {fault!r}; choose one of {', '.join(FAULTS)}")
    rng = random.Random(f"{seed}:faults")
    faults = []
    for _ in range(count):
        pause = round(rng.uniform(0, PAUSE_MAX_S), 4) if rng.random() < PAUSE_SHARE else None
        stage, delay = rng.choice((2, 3)), round(rng.uniform(0, profile.span_s), 7)
        then = (stage, delay) if rng.random() < FOLLOW_UP else None
        faults.append(Faults(pause if fault == "pause" else None, then))
    return faults


@dataclass
class Outcome(EffectVerdicts):
    """What one fuzzed scenario did (a JSON-friendly digest of a ScenarioResult)."""

    index: int
    delay_s: float | None  # as planned (reproducible)
    landed: bool
    zone: str  # the last crash point the killed worker reached, e.g. "charge/before_effect"
    charges: int
    emails: int
    reconciled: int
    status: str
    verdict: str
    attempts: int
    elapsed_s: float = 0.0  # the first worker's life
    marks: list[float] = field(default_factory=list)
    trail: list[str] = field(default_factory=list)  # crash points the first worker reached
    applied_s: float | None = None  # the timer actually set (planned, scaled to the lane's pace)
    run_dir: str = ""
    kills: int = 0  # 1 if the first worker died of its SIGKILL
    pauses: int = 0  # 1 if the first worker was frozen (and woken later) instead
    follow_up_kills: int = 0  # SIGKILLs that landed later: in a resumer or a reconciliation
    trail_s: list[float] = field(default_factory=list)  # when it reached each, since start
    aim: list[Any] | None = None  # ["node/point", offset_s] the timer was set again from
    window: str = ""  # the window the kill landed in (windows_of), filled in by fuzz()

    @classmethod
    def of(cls, index: int, delay: float | None, result: ScenarioResult,
           applied: float | None = None, aim: tuple[str, float] | None = None) -> Outcome:
        first = result.attempts[0]
        trail = list(first.trail)
        zone = trail[-1] if trail else STARTUP
        if result.paused:
            zone = f"paused in {zone}"
        if not result.kill_landed:
            zone = NOT_LANDED
        later = sum(a.outcome == "killed" and a.armed != "woken" for a in result.attempts[1:])
        return cls(index, delay, result.kill_landed, zone, result.charges, result.emails,
                   result.reconciled, result.status, result.verdict, len(result.attempts),
                   first.elapsed_s, first.checkpoints_s, trail,
                   delay if applied is None else applied, str(result.run_dir),
                   int(first.outcome == "killed"), int(first.outcome == "paused"), later,
                   list(first.trail_s), list(aim) if aim else None)


@dataclass
class FuzzReport:
    graph: str
    seed: int
    profile: Profile
    delays: list[float]
    outcomes: list[Outcome]
    jobs: int
    elapsed_s: float
    root: str
    cpu_s: float = 0.0  # CPU of this process, the lanes and every worker (calibration included)
    wanted: int = 0  # the kills asked for
    fault: str = "kill"
    lane_failures: list[str] = field(default_factory=list)  # tracebacks of lanes that died
    aimed: bool = True  # drawn window by window (fuzz(aim=...))

    @property
    def kills(self) -> int:
        """First workers SIGKILLed (a timer that fired after its worker finished killed
        nothing); follow-up kills in later stages are :attr:`follow_up_kills`."""
        return sum(o.kills for o in self.outcomes)

    @property
    def follow_up_kills(self) -> int:
        return sum(o.follow_up_kills for o in self.outcomes)

    @property
    def pauses(self) -> int:
        """Workers that were frozen while still running, then woken."""
        return sum(o.pauses for o in self.outcomes)

    @property
    def timers(self) -> int:
        return len(self.delays)

    @property
    def landed(self) -> int:
        return sum(o.landed for o in self.outcomes)

    @property
    def double_charges(self) -> int:
        return sum(o.double_charge for o in self.outcomes)

    @property
    def double_emails(self) -> int:
        return sum(o.double_email for o in self.outcomes)

    @property
    def lost(self) -> int:
        missing = self.timers - len(self.outcomes)  # a lane that died took its scenarios along
        return sum(o.lost for o in self.outcomes) + missing

    @property
    def reconciled(self) -> int:
        return sum(o.reconciled for o in self.outcomes)

    @property
    def errors(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.status == "error"]

    @property
    def kills_per_s(self) -> float:
        return self.landed / self.elapsed_s if self.elapsed_s else 0.0

    @property
    def clean(self) -> bool:
        return not (self.double_charges or self.double_emails or self.lost)

    def windows(self) -> list[Window]:
        """The run's windows: the profile's, or, for a pinned profile, those of the
        longest trail a worker of this fuzz left (the same names, without times)."""
        if self.profile.points:
            return self.profile.windows()
        return windows_of(max((o.trail for o in self.outcomes), key=len, default=[]))

    def coverage(self) -> tuple[int, float, float]:
        """``(windows, percent of landed kills inside one, the least-hit window's
        percent)``; start-up, after the graph and freezes count as landed kills."""
        windows = self.windows()
        landed = [o for o in self.outcomes if o.landed]
        if not windows or not landed:
            return len(windows), 0.0, 0.0
        hits = {w.name: 0 for w in windows}
        for o in landed:
            name = window_of(o.zone, windows)
            if name in hits:
                hits[name] += 1
        share = 100 / len(landed)
        return len(windows), sum(hits.values()) * share, min(hits.values()) * share

    def first_double(self) -> int | None:
        """After how many landed kills (in the plan's order) the first double came."""
        count = 0
        for o in self.outcomes:
            count += o.landed
            if o.double_charge or o.double_email:
                return count
        return None

    def summary(self) -> str:
        line = (f"kills={self.kills} double_charges={self.double_charges} "
                f"double_emails={self.double_emails} lost={self.lost} "
                f"reconciled={self.reconciled}")
        if self.fault == "pause" or self.pauses:
            line += f" pauses={self.pauses}"
        windows, inside, least = self.coverage()
        return f"{line} windows={windows} in_windows={inside:.0f} min_window={least:.0f}"

    def landed_line(self) -> str:
        what = "kills and pauses" if self.fault == "pause" else "kills"
        return (f"landed={self.landed}/{self.wanted} {what} from {self.timers} timers "
                f"({self.timers - self.landed} fired after the worker had finished, redrawn) "
                f"errors={len(self.errors)} jobs={self.jobs} "
                f"elapsed={self.elapsed_s:.1f}s rate={self.kills_per_s:.1f} kills/s "
                f"cpu={self.cpu_s / max(self.landed, 1) * 1000:.0f} ms/kill "
                f"follow_up_kills={self.follow_up_kills} (in resumers and reconciliation) "
                f"first_double={self.first_double() or 'none'}")

    def zones(self) -> Table:
        """Where the kills landed and what they caused, in the order the graph runs."""
        by_zone: dict[str, list[Outcome]] = {}
        for o in self.outcomes:
            by_zone.setdefault(o.zone, []).append(o)
        full = max((o.trail for o in self.outcomes), key=len, default=[])  # an unkilled run's

        def rank(zone: str) -> tuple[int, int]:
            if zone.startswith("paused in "):  # the freezes, after the kills, in graph order
                first, second = rank(zone.removeprefix("paused in "))
                return (3 + first, second)
            if zone == STARTUP:
                return (0, 0)
            if zone in full:
                return (1, full.index(zone))
            return (2, 0)  # not landed

        rows = [{"killed after": zone, "kills": len(hit),
                 "double charges": sum(o.double_charge for o in hit),
                 "double emails": sum(o.double_email for o in hit),
                 "lost": sum(o.lost for o in hit),
                 "reconciled": sum(o.reconciled for o in hit)}
                for zone, hit in sorted(by_zone.items(), key=lambda item: rank(item[0]))]
        return Table(rows, title=f"where {self.timers} random timers fired ({self.graph} graph)")

    def windows_table(self) -> Table:
        """How many kills each window got, and what they caused, in the order of the run."""
        windows = self.windows()
        order = [STARTUP] + [w.name for w in windows] + [AFTER]
        landed = [o for o in self.outcomes if o.landed]
        rows = []
        for name in order:
            hit = [o for o in landed if window_of(o.zone, windows) == name]
            rows.append({"window": name, "kills": len(hit),
                         "share": f"{100 * len(hit) / max(len(landed), 1):.0f} %",
                         "double charges": sum(o.double_charge for o in hit),
                         "double emails": sum(o.double_email for o in hit),
                         "lost": sum(o.lost for o in hit)})
        return Table(rows, title=f"the {len(landed)} kills that landed, by window")

    def to_json(self) -> dict[str, Any]:
        return {"graph": self.graph, "seed": self.seed, "profile": self.profile.as_arg(),
                "jobs": self.jobs, "elapsed_s": self.elapsed_s, "kills": self.kills,
                "timers": self.timers,
                "landed": self.landed, "double_charges": self.double_charges,
                "double_emails": self.double_emails, "lost": self.lost,
                "reconciled": self.reconciled, "pauses": self.pauses, "fault": self.fault,
                "follow_up_kills": self.follow_up_kills,
                "windows": [asdict(w) for w in self.windows()],
                "coverage": dict(zip(("windows", "in_windows", "min_window"),
                                     self.coverage(), strict=True)),
                "first_double": self.first_double(), "aimed": self.aimed,
                "delays": self.delays,
                "outcomes": [asdict(o) for o in self.outcomes]}


# ---------------------------------------------------------------------- running
def default_root() -> tuple[Path, bool]:
    """Where run directories go when the caller names none: RAM if it has room, else temp."""
    try:
        if RAM_DIR.is_dir() and os.access(RAM_DIR, os.W_OK) and (
                shutil.disk_usage(RAM_DIR).free >= RAM_MIN_FREE):
            return RAM_DIR, True
    except OSError:
        pass
    return Path(tempfile.gettempdir()), False


def fuzz(
    graph: str = "keyed",
    kills: int = 100,
    seed: int = 0,
    *,
    jobs: int | None = None,
    root: str | Path | None = None,
    profile: Profile | None = None,
    progress: bool = True,
    bias: float = BIAS,
    adapt: bool | None = None,
    fault: str = "kill",
    follow_ups: bool = True,
    aim: bool = True,
) -> FuzzReport:
    """Calibrate (unless ``profile`` is given), draw the delays, kill and resume ``kills`` times.

    ``adapt`` (default: only when the profile was measured here) scales each planned delay
    to the pace the lane's workers have right now, measured by an unkilled probe run every
    :data:`PROBE_EVERY` kills; with a pinned profile the timers are exactly the plan.
    ``aim=False`` draws as the fuzzer did before it aimed (uniform over the whole life, or
    over the graph's run), to compare the two: the report counts kills by the same
    windows."""
    resolve_factory(graph)  # fail here, with a clear message, not in every lane
    if fault not in FAULTS:
        raise ValueError(f"unknown fault {fault!r}; choose one of {', '.join(FAULTS)}")
    jobs = max(1, jobs or os.cpu_count() or 1)
    keep = root is not None
    base = Path(root) if root else default_root()[0]
    base.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="crash-fuzz-", dir=base))
    cpu_before = _cpu_s()
    try:
        with Lanes(graph, work, jobs, keep_failed=keep) as lanes:
            if adapt is None:
                adapt = profile is None
            if profile is None:
                profile = lanes.calibrate()
            bar = tqdm(total=kills, desc=f"crash fuzz ({graph})", unit="kill", file=sys.stderr,
                       disable=not progress, smoothing=0.1)
            started = time.monotonic()
            delays: list[float] = []
            outcomes: list[Outcome] = []
            with bar:
                # A timer that fires after its worker finished kills nothing: draw more
                # (the same seeded sequence, continued) until ``kills`` SIGKILLs landed.
                for _ in range(MAX_DRAW_ROUNDS):
                    missing = kills - sum(o.landed for o in outcomes)
                    if missing <= 0:
                        break
                    first = len(delays)
                    delays = plan(seed, first + missing, profile, bias=bias, aim=aim)
                    extras = plan_faults(seed, len(delays), profile, fault)
                    if not follow_ups:
                        extras = [Faults(e.pause_for_s) for e in extras]
                    outcomes += lanes.run(
                        list(enumerate(delays))[first:],
                        on_result=lambda o: bar.update(1 if o.landed else 0),
                        pace_of=profile.span_s if adapt else None,
                        faults=extras[first:],
                        aims=[profile.aim(d) if aim else None for d in delays[first:]])
                    if lanes.problems:
                        break
            elapsed = time.monotonic() - started
            lane_failures = list(lanes.problems)
    finally:
        if not keep:
            shutil.rmtree(work, ignore_errors=True)
    outcomes.sort(key=lambda o: o.index)
    report = FuzzReport(str(graph), seed, profile, delays, outcomes, jobs, elapsed, str(work),
                        _cpu_s() - cpu_before, wanted=kills, fault=fault,
                        lane_failures=lane_failures, aimed=aim and bool(profile.points))
    windows = report.windows()
    for o in outcomes:
        o.window = window_of(o.zone, windows)
    return report


def _cpu_s() -> float:
    """User + system CPU of this process and of its reaped children (lanes, workers)."""
    own, children = (resource.getrusage(who) for who in (resource.RUSAGE_SELF,
                                                         resource.RUSAGE_CHILDREN))
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def calibrate(graph: str, root: Path, *, jobs: int = 1, runs: int = CALIBRATION_RUNS) -> Profile:
    """Measure the :class:`Profile` of ``graph`` with ``jobs`` lanes running at once."""
    with Lanes(graph, Path(root), jobs, keep_failed=False) as lanes:
        return lanes.calibrate(runs)


class Lanes:
    """``jobs`` lane processes, forked from this warm one, each with its own
    :class:`CrashHarness`; a lane runs one scenario at a time and the next task
    goes to whichever lane is free. Each lane does one unkilled warm-up run
    first, so the calibration and the kills meet the same warm processes."""

    def __init__(self, graph: str, root: Path, jobs: int, *, keep_failed: bool) -> None:
        self.graph = graph
        self.root = root
        self.jobs = jobs
        self.keep_failed = keep_failed
        self._lanes: dict[int, tuple[int, fork.Child]] = {}  # result fd -> (task fd, lane)
        self.problems: list[str] = []

    def __enter__(self) -> Lanes:
        self.root.mkdir(parents=True, exist_ok=True)
        for number in range(self.jobs):
            task_read, task_write = os.pipe()
            result_read, result_write = os.pipe()

            def lane(number: int = number, task_read: int = task_read,
                     task_write: int = task_write, result_read: int = result_read,
                     result_write: int = result_write) -> int:
                try:
                    for fd in (task_write, result_read, *self._fds()):
                        os.close(fd)
                    _lane(self.graph, self.root / f"lane-{number}", task_read, result_write,
                          self.keep_failed)
                    return 0
                except BaseException:
                    with contextlib.suppress(BaseException):
                        os.write(result_write, (json.dumps(
                            {"lane_error": traceback.format_exc()}) + "\n").encode())
                    return 1

            child = fork.start(lane)
            os.close(task_read)
            os.close(result_write)
            self._lanes[result_read] = (task_write, child)
        return self

    def _fds(self) -> list[int]:
        return [fd for result, (task, _) in self._lanes.items() for fd in (result, task)]

    def __exit__(self, *exc: object) -> None:
        for result, (task, lane) in self._lanes.items():
            for fd in (task, result):
                with contextlib.suppress(OSError):
                    os.close(fd)
            lane.wait()
        self._lanes = {}
        if self.problems:
            print("a fuzz lane failed:\n" + self.problems[0], file=sys.stderr)

    def calibrate(self, runs: int = CALIBRATION_RUNS) -> Profile:
        """Unkilled runs on every lane at once (the conditions the kills will meet); the
        medians of the worker's life and of each checkpoint's time make the profile."""
        outcomes = self.run([(-1 - i, None) for i in range(runs * self.jobs)])
        finished = [o for o in outcomes if o.status == "completed" and o.elapsed_s > 0]
        if not finished:
            detail = outcomes[0].verdict if outcomes else "no lane reported back"
            raise RuntimeError(f"cannot calibrate: the {self.graph} graph never completes "
                               f"({detail})")
        span = statistics.median(o.elapsed_s for o in finished)
        marked = [o.marks for o in finished if o.marks]
        marks: tuple[float, ...] = ()
        if marked and len({len(m) for m in marked}) == 1:
            marks = tuple(round(statistics.median(m[i] for m in marked), 4)
                          for i in range(len(marked[0])))
        window = (0.0, span)
        if marked:
            window = (statistics.median(m[0] for m in marked),
                      statistics.median(m[-1] for m in marked))
        points: tuple[tuple[str, float], ...] = ()
        shortest: tuple[float, ...] = ()
        trails = [o for o in finished if o.trail and len(o.trail_s) == len(o.trail)]
        if trails and len({tuple(o.trail) for o in trails}) == 1:  # every run agrees
            points = tuple((label, round(statistics.median(o.trail_s[i] for o in trails), 6))
                           for i, label in enumerate(trails[0].trail))
            ends = [[*o.trail_s[1:], o.elapsed_s] for o in trails]
            shortest = tuple(round(min(end[i] - o.trail_s[i] for o, end in zip(
                trails, ends, strict=True)), 6) for i in range(len(points)))
        return Profile(round(span, 4),
                       (round(min(window[0], span), 4), round(min(window[1], span), 4)), marks,
                       points, shortest)

    def run(self, tasks: list[tuple[int, float | None]], on_result=None,
            pace_of: float | None = None, faults: list[Faults] | None = None,
            aims: list[tuple[str, float] | None] | None = None) -> list[Outcome]:
        """Run every ``(index, delay)``; a task lost with a dying lane has no outcome.

        With ``pace_of`` (the span the delays were planned for), each lane scales a delay
        by its workers' current life / ``pace_of`` (see :func:`_lane`). ``aims`` (one per
        task, from :meth:`Profile.aim`) time each kill from a point instead."""
        extra = dict(zip((index for index, _ in tasks), faults or [], strict=False))
        aimed = dict(zip((index for index, _ in tasks), aims or [], strict=False))
        pending = list(reversed(tasks))
        outcomes: list[Outcome] = []
        buffers = dict.fromkeys(self._lanes, b"")
        idle = list(self._lanes)
        busy: set[int] = set()
        with selectors.DefaultSelector() as selector:
            for fd in self._lanes:
                selector.register(fd, selectors.EVENT_READ)
            while pending or busy:
                while pending and idle:
                    fd = idle.pop()
                    index, delay = pending.pop()
                    more = extra.get(index, Faults()).as_text()
                    aim = json.dumps(aimed.get(index))
                    os.write(self._lanes[fd][0],
                             f"{index}\t{delay}\t{pace_of}\t{more}\t{aim}\n".encode())
                    busy.add(fd)
                if not busy:
                    break  # every lane died
                for key, _ in selector.select():
                    fd = key.fd
                    chunk = os.read(fd, 1 << 16)
                    if not chunk:  # the lane is gone; its task goes with it
                        selector.unregister(fd)
                        busy.discard(fd)
                        continue
                    buffers[fd] += chunk
                    *lines, buffers[fd] = buffers[fd].split(b"\n")
                    for line in lines:
                        data = json.loads(line)
                        if "lane_error" in data:
                            self.problems.append(data["lane_error"])
                            continue
                        outcome = Outcome(**data)
                        outcomes.append(outcome)
                        busy.discard(fd)
                        idle.append(fd)
                        if on_result:
                            on_result(outcome)
        return outcomes


def _lane(graph: str, root: Path, task_fd: int, result_fd: int, keep_failed: bool) -> None:
    """Run the tasks read from ``task_fd`` (``index<TAB>delay<TAB>pace``), one at a time.

    A machine's speed drifts (other programs, caches, thermal limits), so a delay
    planned for a calibrated span can land later or earlier in a worker's life than
    planned. When ``pace`` is given, the lane keeps the lives of its recent unkilled
    runs (calibration runs and a probe every :data:`PROBE_EVERY` kills) and sets the
    timer to ``delay * median(recent lives) / pace``: the same *relative* instant.
    """
    harness = CrashHarness(graph, root=root)
    warm = harness.run(thread_id="warm-up")
    shutil.rmtree(warm.run_dir, ignore_errors=True)
    lives: deque[float] = deque(maxlen=5)
    paced = 0
    kept = 0
    with os.fdopen(task_fd, "r") as tasks:
        for line in tasks:
            index, delay_text, pace_text, *more = line.rstrip("\n").split("\t")
            faults = Faults.parse(more[0]) if more else Faults()
            aim = tuple(json.loads(more[1])) if len(more) > 1 and more[1] != "null" else None
            delay = None if delay_text == "None" else float(delay_text)
            pace = None if pace_text == "None" else float(pace_text)
            applied = delay
            if delay is not None and pace:
                if not lives or paced % PROBE_EVERY == 0:
                    probe = harness.run(thread_id=f"probe-{index}")
                    if probe.status == "completed":
                        lives.append(probe.attempts[0].elapsed_s)
                    shutil.rmtree(probe.run_dir, ignore_errors=True)
                paced += 1
                if lives:
                    applied = round(delay * statistics.median(lives) / pace, 7)
            if applied is not None and aim is not None:
                # the fallback, should the point never come: late enough that a slow
                # start-up (a few times the typical one) still meets its point first
                applied = round(applied + AIM_FALLBACK_SPANS * (pace or applied), 7)
            result = harness.run(kill_after_s=applied, thread_id=f"fuzz-{index}",
                                 pause_for_s=faults.pause_for_s if applied is not None else None,
                                 then_kill=faults.then_kill if applied is not None else None,
                                 aim=aim if applied is not None else None)
            if delay is None and result.status == "completed":
                lives.append(result.attempts[0].elapsed_s)
            outcome = Outcome.of(int(index), delay, result, applied, aim)
            failed = outcome.double_charge or outcome.double_email or outcome.lost
            if failed and keep_failed and kept < KEEP_FAILED:
                kept += 1
            else:
                shutil.rmtree(result.run_dir, ignore_errors=True)
                outcome.run_dir = ""
            os.write(result_fd, (json.dumps(asdict(outcome)) + "\n").encode())


# -------------------------------------------------------------------- command line
def add_command(commands) -> None:
    """Register ``fuzz`` on ``python -m course.crash``'s subcommands."""
    p = commands.add_parser(
        "fuzz", help="SIGKILL the worker at random instants, resume, count doubles",
        description=__doc__.split("\n\n")[1])
    p.add_argument("--kills", type=int, default=100, help="scenarios, one random kill each")
    p.add_argument("--seed", type=int, default=0, help="same seed, same delays")
    p.add_argument("--graph", default="keyed",
                   help="naive, keyed, or package.module:factory (factory(world, checkpointer))")
    p.add_argument("--jobs", type=int, default=None, help="parallel lanes (default: one per core)")
    p.add_argument("--root", metavar="DIR",
                   help="put run directories under DIR and keep failing ones "
                        "(default: RAM if available, removed afterwards)")
    p.add_argument("--profile", metavar="SPAN_MS,FROM_MS,TO_MS",
                   help="skip calibration and pacing: use this profile and set every timer "
                        "to exactly the planned delay")
    p.add_argument("--delays-out", metavar="FILE", help="write the seed, profile and delays")
    p.add_argument("--json", metavar="FILE", help="write every scenario's outcome as JSON")
    p.add_argument("--fault", choices=FAULTS, default="kill",
                   help="kill: SIGKILL only; pause: half of the first interruptions freeze the "
                        "worker (SIGSTOP, then SIGCONT) instead, while resumers carry on")
    p.add_argument("--aim", choices=("on", "off"), default="on",
                   help="on: draw instants window by window, timed from the points (the "
                        "default); off: uniform over the worker's life, as before, to compare")
    p.add_argument("--strict", action="store_true",
                   help="exit 1 if any double or lost run was found (for the keyed graph)")
    p.add_argument("--no-progress", action="store_true")
    p.set_defaults(run=run_command)


def run_command(args) -> int:
    if args.kills < 0:
        print(f"error: --kills must be 0 or more, got {args.kills}", file=sys.stderr)
        return 2
    try:
        resolve_factory(args.graph)
        profile = Profile.parse(args.profile) if args.profile else None
    except (ValueError, ImportError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    report = fuzz(args.graph, args.kills, args.seed, jobs=args.jobs, root=args.root,
                  profile=profile, progress=not args.no_progress,
                  fault=getattr(args, "fault", "kill"), aim=getattr(args, "aim", "on") == "on")
    if args.delays_out:
        Path(args.delays_out).write_text(json.dumps(
            {"seed": report.seed, "kills": report.kills, "profile": report.profile.as_arg(),
             "delays": report.delays}, indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps(report.to_json(), indent=1))
    print(f"crash fuzz: {report.graph} graph, seed {report.seed}, {report.kills} kills; "
          f"profile: {report.profile.describe()}")
    if report.outcomes:
        print(report.zones())
        print(report.windows_table())
    for o in report.errors[:1]:
        print(f"first error (scenario {o.index}): {o.verdict}")
    failing = [o for o in report.outcomes if o.run_dir]
    if failing:
        print(f"kept {len(failing)} failing run directories, e.g. {failing[0].run_dir}")
    print(report.landed_line())
    print(report.summary())
    if report.lane_failures:  # its traceback is printed above
        print(f"error: a fuzz lane died; {report.landed} of the {report.wanted} kills asked "
              f"for landed", file=sys.stderr)
        return 1
    return 1 if args.strict and not report.clean else 0
