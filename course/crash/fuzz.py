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

import json
import os
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

from tqdm import tqdm

from course.base.scratch import RAM_DIR, RAM_MIN_FREE, ram_or_temp
from course.crash.fuzz_lanes import (
    AIM_FALLBACK_SPANS,
    CALIBRATION_RUNS,
    KEEP_FAILED,
    PROBE_EVERY,
    Lanes,
    calibrate,
)
from course.crash.fuzz_plan import (
    AFTER,
    AIM_LEAD_S,
    BIAS,
    FAULTS,
    FOLLOW_UP,
    OVERSHOOT,
    PAUSE_MAX_S,
    PAUSE_SHARE,
    START_SHARE,
    TAIL_SHARE,
    Faults,
    Profile,
    Window,
    plan,
    plan_faults,
    window_of,
    windows_of,
)
from course.crash.fuzz_report import NOT_LANDED, STARTUP, FuzzReport, Outcome
from course.crash.harness import resolve_factory

__all__ = ["AFTER", "AIM_FALLBACK_SPANS", "AIM_LEAD_S", "BIAS", "CALIBRATION_RUNS", "FAULTS",
           "FOLLOW_UP", "KEEP_FAILED", "MAX_DRAW_ROUNDS", "NOT_LANDED", "OVERSHOOT",
           "PAUSE_MAX_S", "PAUSE_SHARE", "PROBE_EVERY", "RAM_DIR", "RAM_MIN_FREE",
           "STARTUP", "START_SHARE", "TAIL_SHARE", "Faults", "FuzzReport", "Lanes", "Outcome",
           "Profile", "Window", "add_command", "calibrate", "default_root", "fuzz", "plan",
           "plan_faults", "run_command", "window_of", "windows_of"]

MAX_DRAW_ROUNDS = 30  # rounds of redrawing timers that fired too late, before giving up


# ---------------------------------------------------------------------- running
default_root = ram_or_temp  # where run directories go when the caller names none


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
