"""What one graded notebook may take from the grading machine, and how each limit holds.

Grading runs many students' notebooks side by side; one that allocates 30 GB, forks
without end, prints a gigabyte or fills the disk must end as *that* student's failure,
with the other students' grades and times untouched. :class:`Limits` holds the five
limits; each is enforced where it works for every account that grades (root, an
instructor's own account, the hub's formgrader), so by resource limits on the kernel and
everything it starts, and by the grader itself, not by a cgroup (which this machine's
cgroup v1 hierarchy lends to root only, and then only for new groups it makes):

- **memory** (``RLIMIT_DATA``, default 2 GiB): the kernel's, and each process it starts
  has its own. An allocation past it raises ``MemoryError`` in the cell; the kernel lives.
- **processes** (``RLIMIT_NPROC``, default 256 tasks, threads count): set inside the
  kernel. In the sandbox each kernel is a user of its own (a fresh uid as root, a user
  namespace otherwise), so the count is that kernel's alone and a fork bomb gets
  ``BlockingIOError`` once its tree holds the limit. Without the sandbox the count is the
  account's, so the limit is the account's tasks when the kernel starts plus the
  allowance; root is exempt from it there. Where the account's tasks cannot be counted
  (no ``/proc`` and no psutil), this limit is left off rather than set for the whole
  account. Everywhere, :class:`KernelWatch` also counts
  the tasks in the kernel's process group and stops the kernel at the limit: a fork
  bomb's children are copies of the kernel, and the kernel cannot finish its cell beside
  them.
- **output** (default 20 MiB per notebook): the kernel's ``print`` counts what it writes
  (:func:`course.sandbox.ipykernel_stream_write.cap_output`): the write past the limit
  raises :class:`~course.sandbox.ipykernel_stream_write.OutputLimitExceeded` in
  its cell, and later writes are dropped; the grader counts every output as it arrives
  too (rich displays, a rewired ``print``) and keeps nothing past the limit, interrupting
  the cell that went past it. The feedback says so.
- **disk** (default 512 MiB): ``RLIMIT_FSIZE`` bounds every file the kernel writes
  (past it a write fails with ``OSError: [Errno 27] File too large``); the sandbox's
  ``/tmp`` and ``/dev/shm`` are memory file systems of that size; and the grader
  watches the total of the kernel's scratch folder (:class:`KernelWatch`, every
  :data:`WATCH_EVERY_S`), stopping the kernel once it holds more.
- **CPU time** (``RLIMIT_CPU``): the notebook's time budget plus :data:`CPU_MARGIN_S`,
  for the kernel and for each process it starts (a busy loop in a child that outlives
  its cell); past it the process gets ``SIGXCPU`` and ends.

Each breach is said once, on the student's row and in the log, with the student's name
(:func:`breach_of` reads it from a cell's error). ``COURSE_LIMIT_MEMORY``,
``COURSE_LIMIT_PROCESSES``, ``COURSE_LIMIT_OUTPUT`` and ``COURSE_LIMIT_DISK`` set them
(``4G``, ``512M``, ``300``); ``make check`` applies the same limits as ``make grade``.

This module imports nothing heavy: the kernel calls :func:`apply` before ipykernel.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

KIB, MIB, GIB = 1 << 10, 1 << 20, 1 << 30
CPU_MARGIN_S = 30  # beyond the notebook's time budget, before SIGXCPU
WATCH_EVERY_S = 0.2
OUTPUT_CUT = "OutputLimitExceeded"
ENV = {"memory": "COURSE_LIMIT_MEMORY", "processes": "COURSE_LIMIT_PROCESSES",
       "output": "COURSE_LIMIT_OUTPUT", "disk": "COURSE_LIMIT_DISK"}


@dataclass(frozen=True)
class Limits:
    """The limits of one graded notebook (bytes, tasks, seconds; 0 means none)."""

    memory: int = 2 * GIB
    processes: int = 256
    output: int = 20 * MIB
    disk: int = 512 * MIB
    cpu_s: int = 0

    @classmethod
    def current(cls, budget_s: float = 0) -> Limits:
        """The defaults, overridden by ``COURSE_LIMIT_*``; CPU time from ``budget_s``.

        Raises:
            ValueError: a variable that is not a size (``2G``, ``512M``, ``300``), in one
                line naming it.
        """
        values = {}
        for name, variable in ENV.items():
            text = os.environ.get(variable, "").strip()
            if text:
                try:
                    values[name] = parse_size(text) if name != "processes" else int(text)
                except ValueError:
                    raise ValueError(f"{variable}={text!r} is not a size (like 2G, 512M or "
                                     "300)") from None
        return cls(**values, cpu_s=int(budget_s) + CPU_MARGIN_S if budget_s else 0)

    def plan(self) -> dict[str, int]:
        """What the kernel is told (:func:`apply`)."""
        return asdict(self)

    def says(self, name: str) -> str:
        """``"memory limit (2 GiB)"``."""
        value = getattr(self, name if name != "cpu" else "cpu_s")
        shown = (f"{value} tasks" if name == "processes" else f"{value} s" if name == "cpu"
                 else size_text(value))
        words = {"processes": "process", "cpu": "CPU time"}.get(name, name)
        return f"{words} limit ({shown})"


def parse_size(text: str) -> int:
    """``"2G"`` → 2 GiB in bytes; ``K``, ``M``, ``G`` (with or without ``i``/``B``)."""
    found = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMG]?)(?:i?B)?\s*", text, re.I)
    if not found:
        raise ValueError(f"not a size: {text!r}")
    unit = {"": 1, "K": KIB, "M": MIB, "G": GIB}[found.group(2).upper()]
    return int(float(found.group(1)) * unit)


def size_text(value: int) -> str:
    for unit, size in (("GiB", GIB), ("MiB", MIB), ("KiB", KIB)):
        if value >= size:
            return f"{value / size:g} {unit}"
    return f"{value} bytes"


# ------------------------------------------------------------------ in the kernel
def apply(plan: dict[str, int]) -> None:
    """Set the limits on this process (the kernel), before it runs anything; every
    process it starts inherits them. ``plan`` is :meth:`Limits.plan`."""
    import resource

    def cap(which: int, value: int) -> None:
        if value > 0:
            _, hard = resource.getrlimit(which)
            value = value if hard == resource.RLIM_INFINITY else min(value, hard)
            resource.setrlimit(which, (value, value))

    cap(resource.RLIMIT_DATA, plan.get("memory", 0))
    cap(resource.RLIMIT_FSIZE, plan.get("disk", 0))
    cap(resource.RLIMIT_CPU, plan.get("cpu_s", 0))
    processes = plan.get("processes", 0)
    if processes > 0:
        if _own_user_namespace():
            cap(resource.RLIMIT_NPROC, processes)
        else:
            running = _tasks_of(os.getuid())
            if running is not None:  # uncounted (no /proc, no psutil): no limit, not 256
                cap(resource.RLIMIT_NPROC, running + processes)


def _own_user_namespace() -> bool:
    """Whether this process runs in a user namespace of its own (the sandbox's)."""
    try:
        mapping = Path("/proc/self/uid_map").read_text().split()
    except OSError:
        return False
    return mapping[:3] != ["0", "0", "4294967295"]


def _tasks_of(uid: int) -> int | None:
    """The tasks (threads included: what Linux's ``RLIMIT_NPROC`` counts; macOS counts
    processes, so this over-counts there, which only loosens the limit) ``uid`` runs now,
    or None when they cannot be counted.

    Read from ``/proc`` on Linux, else with psutil (macOS has no ``/proc``). A count of 0
    means it could not see them (this process is one of them): the limit would then be
    the allowance for the whole account, which a desktop account's few hundred processes
    already exceed, and every thread the kernel starts would fail. So: None, no limit."""
    count = 0
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            fields = dict(line.split(":", 1) for line in status.read_text().splitlines()
                          if ":" in line)
        except OSError:
            continue
        if fields.get("Uid", "").split()[:1] == [str(uid)]:
            count += int(fields.get("Threads", "1").strip() or 1)
    return count or _tasks_by_psutil(uid)


def _tasks_by_psutil(uid: int) -> int | None:
    try:
        import psutil
    except ImportError:
        return None
    count = 0
    try:
        for process in psutil.process_iter(["uids", "num_threads"]):
            uids, threads = process.info["uids"], process.info["num_threads"]
            if uids is not None and uids.real == uid:
                count += threads or 1
    except Exception:  # psutil.Error, OSError, and psutil's own IndexError on an empty /proc
        return None
    return count or None


# --------------------------------------------------------------------- in the grader
def breach_of(ename: str | None, evalue: str | None, limits: Limits) -> str | None:
    """Which limit a cell's error means, as the student's row says it; None: none."""
    evalue = evalue or ""
    if ename == "MemoryError":
        return f"went past the {limits.says('memory')}"
    if ename == "BlockingIOError" and "Resource temporarily unavailable" in evalue:
        return (f"hit the {limits.says('processes')}: a fork was refused, and its kernel "
                "was stopped")
    if ename == OUTPUT_CUT:
        return f"printed past the {limits.says('output')}: the rest was cut"
    if "[Errno 27]" in evalue or "File too large" in evalue or "[Errno 28]" in evalue:
        return f"wrote past the {limits.says('disk')}"
    return None


_BREACH = re.compile(r"\b(?:memory|process|output|disk|CPU time) limit \(")


def is_breach(line: str) -> bool:
    """Whether a line of the grading log says a notebook went past one of its limits."""
    return bool(_BREACH.search(line))


def tasks_in_group(pgid: int) -> int:
    """The tasks (threads included) of every process in process group ``pgid``."""
    count = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 17 and fields[2] == str(pgid):  # pgrp; num_threads is 18th
            count += int(fields[17])
    return count


class KernelWatch:
    """Looks at a running kernel every :data:`WATCH_EVERY_S` and calls ``stop(reason)``
    once when it goes past a limit the kernel cannot see itself: the total size of its
    folders (the disk limit; a file's own limit holds each file), or the tasks in its
    process group (the process limit, where ``RLIMIT_NPROC`` cannot hold: root outside
    the sandbox; and in the sandbox a fork bomb's children are copies of the kernel that
    wedge it before its cell can end). A scan counts at most ``max_entries`` files: so
    many is itself past any honest notebook."""

    def __init__(self, folders: list[Path], limits: Limits, pgid: Callable[[], int | None],
                 stop: Callable[[str], None], max_entries: int = 100_000) -> None:
        self.folders, self.limits, self.pgid, self.stop = folders, limits, pgid, stop
        self.max_entries = max_entries
        self.reason = ""
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True, name="kernel-watch")
        self._thread.start()

    def size(self) -> int:
        """The bytes the folders hold on disk."""
        total, seen = 0, 0
        pending = [str(f) for f in self.folders]
        while pending and seen < self.max_entries:
            try:
                entries = os.scandir(pending.pop())
            except OSError:
                continue
            with entries:
                for entry in entries:
                    seen += 1
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            pending.append(entry.path)
                        elif entry.is_file(follow_symlinks=False):
                            total += entry.stat(follow_symlinks=False).st_blocks * 512
                    except OSError:
                        continue
        return total if seen < self.max_entries else max(total, self.limits.disk + 1)

    def check(self) -> str:
        """What the kernel went past now, as its row says it; "" for nothing."""
        limits = self.limits
        if limits.disk > 0 and self.folders:
            size = self.size()
            if size > limits.disk:
                return (f"wrote past the {limits.says('disk')} in its scratch folder "
                        f"({size_text(size)}): its kernel was stopped")
        group = self.pgid()
        if limits.processes > 0 and group:
            tasks = tasks_in_group(group)
            if tasks >= limits.processes:
                return (f"hit the {limits.says('processes')}; {tasks} were running: its "
                        "kernel was stopped")
        return ""

    def _watch(self) -> None:
        while not self._done.wait(WATCH_EVERY_S):
            reason = self.check()
            if reason:
                self.reason = reason
                self.stop(reason)
                return

    def close(self) -> str:
        """Stop watching; why it stopped the kernel ("" if it never did)."""
        self._done.set()
        self._thread.join(timeout=5)
        return self.reason
