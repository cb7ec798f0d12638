"""Crash-fuzz throughput in kills per second (higher is better).

The same seed and the same profile (so the same planned delays, paced to the
lanes as the command line does) are run three ways, one after the other:

- RAM, one lane per core: what ``python -m course.crash fuzz`` does by default;
- disk, one lane per core: the same with every run directory on disk
  (``--root``), where each SQLite commit pays a real ``fsync``;
- RAM, one lane: what a single core gets.

Which filesystem each side really used is read from ``/proc/mounts`` and
printed in the labels: the fuzzer's RAM folder can fall back to the temp
folder (when ``/dev/shm`` is small), and the temp folder is itself RAM on many
systems, so the "disk" side is the first of the temp folder, ``/var/tmp`` and
the home folder that is not tmpfs (and says so when there is none).

The ratio RAM/disk shows what tmpfs saves; the fuzzer's docstring explains
why a SIGKILL test loses no honesty by it (a killed process does not take the
page cache with it). CPU time per kill (this process, the lanes and every
worker, from ``getrusage``; calibration and probes included) is reported too:
it depends much less on how busy the machine is than the rate does, and
cores / CPU-per-kill bounds the rate on an idle machine. How many kills
landed is reported for each run: a kill that lands costs two workers, one that
does not costs one, so rates are only comparable at similar landing counts.
The target of "1,000 kills in about a minute" is 16.7 kills/s.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from bench.common import Comparison, disk_dir, filesystem_of
from course.crash.fuzz import FuzzReport, Lanes, default_root, fuzz

TITLE = "crash-fuzz throughput (kills per second)"

TARGET_KILLS_PER_S = 1000 / 60


def run(quick: bool = False) -> list[Comparison]:
    kills = 60 if quick else 300
    cores = os.cpu_count() or 1
    ram = default_root()[0]
    disk = Path(tempfile.mkdtemp(prefix="bench-fuzz-", dir=disk_dir()))
    ram_label = f"{filesystem_of(ram)} at {ram}"
    disk_label = f"{filesystem_of(disk)} at {disk.parent}"
    if disk_dir() is None:
        disk_label += ": no folder off RAM was found, so both sides are in RAM"
    print(f"  filesystems: RAM side {ram_label}; disk side {disk_label}", flush=True)
    try:
        with Lanes("keyed", disk / "calibrate", cores, keep_failed=False) as lanes:
            profile = lanes.calibrate()
        ram_many, cpu_ram = _fuzz(kills, profile, cores, None)
        disk_many, cpu_disk = _fuzz(kills, profile, cores, disk / "runs")
        ram_one, cpu_one = _fuzz(kills, profile, 1, None)
    finally:
        shutil.rmtree(disk, ignore_errors=True)
    summary = (f"RAM side {ram_label}, disk side {disk_label} | "
               f"{ram_many.summary()} | landed: RAM {ram_many.landed}, disk {disk_many.landed}, "
               f"1 lane {ram_one.landed} of {kills} | "
               f"CPU per kill: RAM {cpu_ram * 1000:.0f} ms, disk {cpu_disk * 1000:.0f} ms, "
               f"1 lane {cpu_one * 1000:.0f} ms -> idle-machine bound "
               f"{cores / cpu_ram:.1f} kills/s on {cores} cores")
    return [
        Comparison("fuzz_rate", f"RAM ({filesystem_of(ram)}), {cores} lanes",
                   f"disk ({filesystem_of(disk.parent)}), {cores} lanes",
                   [ram_many.kills_per_s], [disk_many.kills_per_s], unit="kills/s",
                   note=summary, extra={"profile": profile.as_arg(), "kills": kills,
                                        "cpu_per_kill_s": {"ram": cpu_ram, "disk": cpu_disk,
                                                           "one_lane": cpu_one}}),
        Comparison("fuzz_rate", f"RAM, {cores} lanes", "target: 1,000 kills a minute",
                   [ram_many.kills_per_s], [TARGET_KILLS_PER_S], unit="kills/s", target=1.0,
                   note="ratio >= 1 means 1,000 kills take a minute or less"),
        Comparison("fuzz_rate", f"RAM, {cores} lanes", "RAM, 1 lane",
                   [ram_many.kills_per_s], [ram_one.kills_per_s], unit="kills/s"),
    ]


def _fuzz(kills: int, profile, jobs: int, root: Path | None) -> tuple[FuzzReport, float]:
    report = fuzz("keyed", kills, seed=2024, jobs=jobs, root=root, profile=profile,
                  progress=False, adapt=True)
    if root is not None:
        shutil.rmtree(root, ignore_errors=True)
    return report, report.cpu_s / max(kills, 1)
