"""One crash scenario (SIGKILL inside ``charge``, then resume) forked from a warm
parent, versus the same two workers each started as a fresh interpreter.

Both sides run the same worker code (``course.crash.harness``) on the same
kind of run directory, armed at the same crash point (``charge/after_effect``),
and end with the same ledger (one charge, one email). The samples alternate,
fresh then warm, so a busy moment of the machine hits both sides alike. If any
sample's ledger differs from the others (on either side), the benchmark raises
:class:`LedgersDiffer` and ``python -m bench`` exits non-zero: a speed-up that
changes the outcome is not a speed-up.

- warm: ``CrashHarness("keyed").run("charge", "after_effect")``; each attempt
  is ``fork()``-ed from this process, which has LangGraph imported already.
- fresh: ``python -c`` imports the course and runs the first worker (it kills
  itself at the crash point), then another ``python -c`` resumes it.

The ratio is what the crash harness, the matrix and the fuzzer owe to forking:
a fresh interpreter pays the imports (about 2 s here) on every attempt.
Target: the warm scenario is at least 30 times cheaper.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.common import Comparison, interleaved
from course.crash import CrashHarness
from course.world import World

TITLE = "one crash scenario: forked from a warm parent vs fresh interpreters"
Ledger = tuple[tuple[str, int, int, int, int], ...]  # per invoice: charges, refunds, ...


class LedgersDiffer(RuntimeError):
    """The fresh and the warm side did not end with the same ledger."""


def check_same_ledgers(fresh: list[Ledger], warm: list[Ledger]) -> Ledger:
    """The one ledger every sample of both sides ended with; :class:`LedgersDiffer` if not."""
    seen = set(fresh) | set(warm)
    if len(seen) != 1 or not fresh or not warm:
        raise LedgersDiffer(f"the two sides ended with different ledgers: "
                            f"fresh {sorted(set(fresh))}, warm {sorted(set(warm))}")
    return next(iter(seen))


def _ledger_of(world: World) -> Ledger:
    return tuple((r["invoice_id"], r["charges"], r["refunds"], r["emails"], r["webhooks"])
                 for r in world.ledger().rows)

FRESH_WORKER = """
import sys
from course.crash.harness import standalone_worker
run_dir, thread_id, number, armed = sys.argv[1:5]
raise SystemExit(standalone_worker("keyed", run_dir, thread_id, int(number),
                                   tuple(armed.split("/")) if armed else None))
"""


def run(quick: bool = False) -> list[Comparison]:
    root = Path(tempfile.mkdtemp(prefix="bench-fork-"))
    try:
        harness = CrashHarness("keyed", root=root / "warm")
        fresh_root = CrashHarness("keyed", root=root / "fresh")
        fresh_ledgers: list[Ledger] = []
        warm_ledgers: list[Ledger] = []

        def warm() -> None:
            result = harness.run("charge", "after_effect")
            if not result.killed_as_armed:
                raise RuntimeError(f"the warm worker was not killed at charge/after_effect: "
                                   f"{result.verdict}")
            world = World(result.run_dir)
            warm_ledgers.append(_ledger_of(world))
            world.close()
            shutil.rmtree(result.run_dir)

        count = iter(range(1, 10_000))

        def fresh() -> None:
            run_dir = fresh_root.fresh_run_dir(f"fresh-{next(count)}")
            first = _python(run_dir, "1", "charge/after_effect")
            if first != -signal.SIGKILL:
                raise RuntimeError(f"the fresh worker was not killed at its crash point ({first})")
            second = _python(run_dir, "2", "")
            if second != 0:
                raise RuntimeError(f"the fresh resume exited with {second}: "
                                   f"{(run_dir / 'error.txt').read_text()[-500:]}")
            world = World(run_dir)
            fresh_ledgers.append(_ledger_of(world))
            world.close()
            shutil.rmtree(run_dir)

        fresh_samples, warm_samples = interleaved(fresh, warm, 2 if quick else 6)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    ledger = check_same_ledgers(fresh_ledgers, warm_ledgers)
    return [Comparison(
        "fork_vs_fresh", "fresh interpreters (kill + resume)", "forked from a warm parent",
        fresh_samples, warm_samples, target=30.0,
        note=f"interleaved; every sample of both sides ended with the ledger {list(ledger)}",
        extra={"cores": os.cpu_count()})]


def _python(run_dir: Path, number: str, armed: str) -> int:
    done = subprocess.run([sys.executable, "-c", FRESH_WORKER, str(run_dir), "bench-thread",
                           number, armed], capture_output=True, timeout=300)
    return done.returncode
