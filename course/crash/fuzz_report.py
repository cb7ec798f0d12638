"""What a fuzz run found: an :class:`Outcome` per scenario (JSON-friendly, sent by a lane),
and the :class:`FuzzReport` that counts kills, doubles, losses and window coverage.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from course.base.table import Table
from course.crash.fuzz_plan import AFTER, Profile, Window, window_of, windows_of
from course.crash.harness import EffectVerdicts, ScenarioResult

STARTUP = "start-up (before any node)"
NOT_LANDED = "not landed (worker had finished)"


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
