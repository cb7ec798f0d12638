"""The fuzzer's lanes: warm processes forked from this one, running scenarios in parallel.

:class:`Lanes` gives each task to a free lane and returns one :class:`Outcome` per task
(none for a task lost with a dying lane: see ``problems``); it also measures the
:class:`Profile` (:func:`calibrate`). A lane paces its timers to its workers' life.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import shutil
import statistics
import sys
import traceback
from collections import deque
from dataclasses import asdict
from pathlib import Path

from course.base import fork
from course.crash.fuzz_plan import Faults, Profile
from course.crash.fuzz_report import Outcome
from course.crash.harness import CrashHarness

CALIBRATION_RUNS = 3  # unkilled runs per lane to measure the profile
PROBE_EVERY = 8  # with pacing on, one unkilled probe run per lane every this many kills
KEEP_FAILED = 20  # failing run directories kept under --root for inspection
AIM_FALLBACK_SPANS = 5  # an aimed timer's fallback: this many typical lives after its instant


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
