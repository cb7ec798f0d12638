"""What every benchmark returns, and how the numbers are summarised.

A :class:`Comparison` holds the raw samples of two things measured in the
same run, one after the other, and reports the ratio of their medians. Each
comparison says what the target is and which way is better, so the report can
say whether it was met without anyone asserting it in a test.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Comparison:
    benchmark: str  # the module, e.g. "guard_cost"
    subject: str  # what is measured, e.g. "guarded effect (2 commits)"
    baseline: str  # what it is divided by, e.g. "raw SQLite commit"
    subject_samples: list[float]
    baseline_samples: list[float]
    unit: str = "s"  # "s" or "CPU s" (lower is better) or "kills/s" (higher is better)
    target: float | None = None  # e.g. 30.0 (ratio >= 30) or 2.2 (ratio <= 2.2)
    target_is_max: bool = False  # True: the ratio must stay at or below the target
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def subject_median(self) -> float:
        return statistics.median(self.subject_samples) if self.subject_samples else float("nan")

    @property
    def baseline_median(self) -> float:
        return statistics.median(self.baseline_samples) if self.baseline_samples else float("nan")

    @property
    def ratio(self) -> float:
        if not self.subject_samples or not self.baseline_samples or not self.baseline_median:
            return float("nan")
        return self.subject_median / self.baseline_median

    @property
    def met(self) -> bool | None:
        if self.target is None or self.ratio != self.ratio:  # no target, or NaN
            return None
        return self.ratio <= self.target if self.target_is_max else self.ratio >= self.target

    def target_text(self) -> str:
        if self.target is None:
            return "no target"
        sign = "<=" if self.target_is_max else ">="
        verdict = {True: "met", False: "NOT met", None: "n/a"}[self.met]
        return f"target {sign} {self.target:g}x: {verdict}"

    def lines(self) -> list[str]:
        fmt = {"s": _fmt_time, "CPU s": lambda v: f"{_fmt_time(v)} CPU"}.get(
            self.unit, lambda v: f"{v:.1f} {self.unit}")
        n_s, n_b = len(self.subject_samples), len(self.baseline_samples)
        out = [f"  {self.subject:<44} median {fmt(self.subject_median):>12}  (n={n_s})",
               f"  {self.baseline:<44} median {fmt(self.baseline_median):>12}  (n={n_b})",
               f"  ratio {self.ratio:8.2f}x   {self.target_text()}"]
        if self.note:
            out.append(f"  note: {self.note}")
        return out

    def row(self) -> dict[str, Any]:
        return {"benchmark": self.benchmark, "subject": self.subject, "baseline": self.baseline,
                "unit": self.unit, "subject_median": self.subject_median,
                "baseline_median": self.baseline_median, "ratio": self.ratio,
                "target": self.target, "target_is_max": self.target_is_max, "met": self.met,
                "n_subject": len(self.subject_samples), "n_baseline": len(self.baseline_samples)}

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), **self.row()}


def timed(fn: Callable[[], Any], repeats: int, *, warmup: int = 1) -> list[float]:
    """Wall-clock seconds of ``repeats`` calls of ``fn`` after ``warmup`` unmeasured ones."""
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(repeats):
        started = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - started)
    return samples


def interleaved(a: Callable[[], Any], b: Callable[[], Any], repeats: int, *,
                warmup: int = 1) -> tuple[list[float], list[float]]:
    """Time ``a`` and ``b`` alternately, so a busy moment of the machine hits both alike."""
    for _ in range(warmup):
        a()
        b()
    samples_a, samples_b = [], []
    for _ in range(repeats):
        for fn, samples in ((a, samples_a), (b, samples_b)):
            started = time.perf_counter()
            fn()
            samples.append(time.perf_counter() - started)
    return samples_a, samples_b


def _fmt_time(seconds: float) -> str:
    if seconds != seconds:
        return "n/a"
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.0f} us"


RAM_FILESYSTEMS = ("tmpfs", "ramfs")


def filesystem_of(path: str | Path, mounts: str | None = None) -> str:
    """The type of the filesystem ``path`` lives on (``tmpfs``, ``ext4``...), read from
    ``/proc/mounts`` (the longest mount point that contains it); ``"unknown"`` without it."""
    if mounts is None:
        try:
            mounts = Path("/proc/mounts").read_text()
        except OSError:
            return "unknown"
    target = Path(os.path.realpath(path))
    best, kind = -1, "unknown"
    for line in mounts.splitlines():
        fields = line.split()
        if len(fields) < 3:
            continue
        point = Path(fields[1].replace("\\040", " "))
        if (target == point or point in target.parents) and len(point.parts) > best:
            best, kind = len(point.parts), fields[2]
    return kind


def in_ram(path: str | Path) -> bool:
    return filesystem_of(path) in RAM_FILESYSTEMS


def disk_dir(candidates: list[Path] | None = None) -> Path | None:
    """A writable folder that is not in RAM (the temp folder, /var/tmp, then home), or None."""
    for folder in candidates or [Path(tempfile.gettempdir()), Path("/var/tmp"), Path.home()]:
        if folder.is_dir() and os.access(folder, os.W_OK) and not in_ram(folder):
            return folder
    return None
