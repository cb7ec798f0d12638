"""What the fuzzer kills, and when: seeded plans of instants, aimed at a run's windows.

Pure functions (same arguments, same lists) of a :class:`Profile`, how an unkilled
worker lives; :func:`windows_of` cuts its trail into the windows where doubles are born.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass

from course.base.crashpoints import RUN

OVERSHOOT = 1.15  # uniform draws reach this far past the typical end of a worker
BIAS = 0.8  # share of draws inside the window where the graph runs (most kills hit nodes)
FAULTS = ("kill", "pause")
FOLLOW_UP = 0.3  # share of scenarios with a second SIGKILL in a later stage
PAUSE_SHARE = 0.5  # with --fault pause: share of first interruptions that freeze, not kill
PAUSE_MAX_S = 0.25  # a freeze lasts up to this long (the provider's hold is 50 ms)
START_SHARE = 0.05  # aimed draws in start-up (before the first node)
TAIL_SHARE = 0.05  # aimed draws after the graph's last checkpoint (some past the worker's end)
AIM_LEAD_S = 0.0  # a timer is set again from the last point passed at least this long before
# (0: the point that starts the instant's own stretch; how late this process hears of it
# then decides, and a kill that comes late lands later in the run, never earlier)
AFTER = "after the graph (last checkpoint written)"


@dataclass(frozen=True)
class Profile:
    """How an unkilled worker of this graph lives, in seconds from the moment it starts
    running (just after ``fork``; see :func:`course.crash.timers._started`)."""

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
