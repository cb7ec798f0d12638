"""Plant realistic bugs one at a time in a copy of the repository; report which tests catch each.

    python scripts/mutants.py                  # every mutant (a baseline run first)
    python scripts/mutants.py --only ledger-doubles guard-intent-after-effect
    python scripts/mutants.py --list           # the mutants and the bug each one plants

What it promises:

- The repository is never touched. Its tracked files (``git ls-files``) are
  copied once into a temporary folder; each mutant replaces one exact piece of
  text in one file of that copy, the fast tests run against it
  (``PYTHONPATH=<copy>``, from the copy), and the file is put back before the
  next mutant.
- A baseline run on the unmutated copy comes first (``--no-baseline`` skips
  it): if the suite already fails there, nothing a mutant does can be judged
  and the script stops.
- The tests are the fast suite, exactly: ``pytest -m "not slow and not
  browser" -x -q -p no:cacheprovider`` on every file and folder of ``tests/``.
  A mutant's ``first`` test files lead the list so the likely catcher runs
  early; the whole fast suite still stands behind them, except
  ``tests/test_mutants.py``, which checks that each mutant's text is in the
  code and so would "catch" every mutant without testing anything.
- A mutant is *caught* when pytest fails (exit status 1) and the report names
  the first failing test; *SURVIVED* when the fast suite passes; anything else
  (a collection error, a time-out) is reported as such, never as caught.
- A mutant whose text is no longer in its file (the code moved on) is an
  error, named, before any test runs: update the mutant, do not drop it.
- The table ends the output; the exit status is 0 when every mutant was
  caught, 1 otherwise, 2 for bad arguments.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from course.host.checkout import copy_tracked  # noqa: E402 - after the path set-up

FAST = ["-m", "not slow and not browser", "-x", "-q", "-p", "no:cacheprovider"]
SELF_TEST = "tests/test_mutants.py"  # checks every mutant applies: fails on any mutant, so left out


@dataclass(frozen=True)
class Mutant:
    name: str
    bug: str  # the mistake, as a person would make it
    path: str  # the file, relative to the repository
    old: str  # text that must occur exactly once in it
    new: str
    first: tuple[str, ...] = ()  # test files likely to catch it, run first


MUTANTS: tuple[Mutant, ...] = (
    # ---- the six bugs of the audit (issue 17)
    Mutant("ledger-doubles", "the ledger flags only invoices hit three times or more",
           "course/world/world.py", "            if r[what] > 1\n", "            if r[what] > 2\n",
           ("tests/test_ledger.py",)),
    Mutant("harness-unknown-node", "the harness accepts a node the graph does not have",
           "course/crash/harness.py",
           "            _check_node(graph, node, self.name, world)\n", "            pass\n",
           ("tests/test_crash_harness.py",)),
    Mutant("harness-timer-never-kills", "the harness's timer never sends the SIGKILL",
           "course/crash/timers.py",
           "        return child.kill()\n",
           "        pass\n", ("tests/test_crash_harness.py",)),
    Mutant("guard-intent-after-effect", "the guard fires the effect, then records the intent",
           "course/durable/guard.py",
           "        try:  # durable before the effect\n"
           "            record = store.record_intent(rid, key, digest, args=args, fence=fence)\n"
           "        except RecordExists as race:  # another process recorded it first\n"
           "            record = race.existing\n"
           "        else:\n"
           "            crashpoints.intent_recorded()  # a mark for the fuzzer\n"
           "            try:\n"
           "                result = fn(**args, idem_key=key)\n",
           "        result = fn(**args, idem_key=key)\n"
           "        try:\n"
           "            record = store.record_intent(rid, key, digest, args=args, fence=fence)\n"
           "        except RecordExists as race:\n"
           "            record = race.existing\n"
           "        else:\n"
           "            try:\n"
           "                pass\n",
           ("tests/test_idempotency_processes.py",)),
    Mutant("ci-on-is-not-ci", "CI=on is read as 'not CI', so required tests quietly skip",
           "tests/ci.py", "    return value.strip().lower() not in NOT_CI\n",
           "    return value.strip().lower() in (\"true\", \"1\", \"yes\")\n",
           ("tests/test_ci.py",)),
    Mutant("grading-failure-keeps-points", "a failing graded cell keeps its points",
           "course/grader/scoring.py",
           "                    mine[(notebook.name, grade.name)] = float(grade.score or 0.0)\n",
           "                    mine[(notebook.name, grade.name)] = float(grade.max_score)\n",
           ("tests/test_grading.py",)),
    # ---- one per core module, and the weak spots the audit found
    Mutant("billing-key-params-ignored",
           "the provider replays a key reused with other parameters instead of refusing it",
           "course/world/billing.py",
           "                if row[\"fingerprint\"] != fingerprint:\n",
           "                if False and row[\"fingerprint\"] != fingerprint:\n",
           ("tests/test_billing.py",)),
    Mutant("lease-dead-holder-kept", "a lease held by a SIGKILLed process is never taken over",
           "course/durable/lease.py",
           "current.expires_at <= now\n                or not current.holder_alive())\n",
           "current.expires_at <= now)\n",
           ("tests/test_lease_conformance.py",)),
    Mutant("store-intent-overwritten", "the SQLite store overwrites an in-flight intent",
           "course/durable/idempotency.py",
           "            if row is not None:\n"
           "                raise RecordExists(_row_to_record(dict(row)))\n"
           "            self._conn.execute(\n"
           "                \"INSERT INTO step_records VALUES (?, ?, ?, 'in_flight', NULL, "
           "?, ?)\",\n",
           "            if row is not None and row[\"status\"] == \"done\":\n"
           "                raise RecordExists(_row_to_record(dict(row)))\n"
           "            self._conn.execute(\n"
           "                \"INSERT OR REPLACE INTO step_records VALUES \"\n"
           "                \"(?, ?, ?, 'in_flight', NULL, ?, ?)\",\n",
           ("tests/test_idempotency_conformance.py",)),
    Mutant("crashpoint-sigterm", "a crash point ends the worker politely (SIGTERM), not SIGKILL",
           "course/base/crashpoints.py", "    os.kill(os.getpid(), signal.SIGKILL)\n",
           "    os.kill(os.getpid(), signal.SIGTERM)\n", ("tests/test_crash_harness.py",)),
    Mutant("grading-partial-ignored", "the course scores a cell full unless it raised",
           "course/grader/scoring.py",
           "            earned = scores.get((Path(name).stem, grade_id), 0.0) if graded else 0.0\n",
           "            earned = (0.0 if message else points) if graded else 0.0\n",
           ("tests/test_grading.py",)),
    Mutant("subscription-unkeyed", "pausing or cancelling sends no idempotency key",
           "course/cloudwave/nodes.py",
           "        key = readable_key(state[\"thread_id\"], action, sub.id) if keyed else None\n",
           "        key = None\n", ("tests/test_graph.py",)),
    Mutant("recovery-debugging-resumes", "a debugging session resumes instead of branching",
           "course/durable/recovery.py",
           "    if is_debugging:\n        return Recovery.BRANCH",
           "    if is_debugging:\n        return Recovery.RESUME", ("tests/test_recovery.py",)),
    Mutant("bench-ledgers-not-compared", "fork_vs_fresh accepts two sides that ended differently",
           "bench/fork_vs_fresh.py", "    if len(seen) != 1 or not fresh or not warm:\n",
           "    if not fresh or not warm:\n", ("tests/test_bench.py",)),
)


class MutantError(Exception):
    """A mutant cannot be planted, or the request names no known mutant."""


@dataclass
class Outcome:
    mutant: str
    status: str  # caught | SURVIVED | error: ...
    caught_by: str
    seconds: float


def choose(names: list[str] | None) -> list[Mutant]:
    if not names:
        return list(MUTANTS)
    known = {m.name: m for m in MUTANTS}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise MutantError(f"unknown mutant {', '.join(map(repr, unknown))}; "
                          f"choose from {', '.join(known)}")
    return [known[n] for n in names]


def planted(mutant: Mutant, text: str) -> str:
    """``text`` with the mutant's bug in it; :class:`MutantError` unless ``old`` occurs once."""
    found = text.count(mutant.old)
    if found != 1:
        raise MutantError(f"mutant {mutant.name!r} no longer applies: its text occurs {found} "
                          f"times in {mutant.path} (expected once); update the mutant")
    return text.replace(mutant.old, mutant.new)


def run_fast_tests(copy: Path, first: tuple[str, ...], timeout_s: float) -> tuple[int, str]:
    # No bytecode: a mutant and the original can have the same size and the same second.
    env = {**os.environ, "PYTHONPATH": str(copy), "PYTHONDONTWRITEBYTECODE": "1"}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    command = [sys.executable, "-m", "pytest", *FAST, *test_paths(copy, first)]
    try:
        done = subprocess.run(command, cwd=copy, env=env, capture_output=True, text=True,
                              timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return -1, f"timed out after {timeout_s:.0f} s"
    return done.returncode, done.stdout + done.stderr


def test_paths(copy: Path, first: tuple[str, ...]) -> list[str]:
    """Everything under ``tests/``, the ``first`` files leading. (Naming ``tests`` itself
    after them would not do: pytest folds a file into its folder and runs it in name order.)"""
    leading = [f for f in first if (copy / f).is_file()]
    rest = sorted(p.relative_to(copy).as_posix() for p in (copy / "tests").iterdir()
                  if (p.is_file() and p.name.startswith("test_") and p.suffix == ".py")
                  or (p.is_dir() and not p.name.startswith(("_", "."))))
    return leading + [path for path in rest if path not in leading and path != SELF_TEST]


def first_failure(output: str) -> str:
    for line in output.splitlines():
        if line.startswith(("FAILED ", "ERROR ")):
            return line.split(" - ")[0].split(" ", 1)[1]
    return ""


def judge(mutant: str, code: int, output: str, seconds: float) -> Outcome:
    if code == 1 and first_failure(output):
        return Outcome(mutant, "caught", first_failure(output), seconds)
    if code == 0:
        return Outcome(mutant, "SURVIVED", "-", seconds)
    tail = output.strip().splitlines()[-1:] or ["no output"]
    return Outcome(mutant, f"error (pytest exit {code})", tail[0][:80], seconds)


def table(outcomes: list[Outcome]) -> str:
    rows = [("mutant", "result", "caught by (first failing test)", "s")]
    rows += [(o.mutant, o.status, o.caught_by, f"{o.seconds:.0f}") for o in outcomes]
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip()
             for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python scripts/mutants.py", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", nargs="+", metavar="NAME", help="these mutants only")
    parser.add_argument("--list", action="store_true", help="list the mutants and stop")
    parser.add_argument("--no-baseline", action="store_true",
                        help="skip the run on the unmutated copy")
    parser.add_argument("--timeout", type=float, default=900, metavar="SECONDS",
                        help="per test run (default 900)")
    args = parser.parse_args(argv)
    try:
        mutants = choose(args.only)
        for mutant in mutants:  # every mutant must apply before any test runs
            planted(mutant, (REPO / mutant.path).read_text())
    except MutantError as error:
        print(f"mutants: {error}", file=sys.stderr)
        return 2
    if args.list:
        for mutant in mutants:
            print(f"{mutant.name:30} {mutant.path:32} {mutant.bug}")
        return 0
    with tempfile.TemporaryDirectory(prefix="mutants-") as tmp:
        copy = copy_tracked(REPO, Path(tmp) / "repo")
        if not args.no_baseline:
            started = time.monotonic()
            code, output = run_fast_tests(copy, (), args.timeout)
            print(f"baseline (no mutant): pytest exit {code} in "
                  f"{time.monotonic() - started:.0f} s", flush=True)
            if code != 0:
                print(output[-3000:], file=sys.stderr)
                print("mutants: the fast tests fail without any mutant; fix that first",
                      file=sys.stderr)
                return 1
        outcomes = []
        for mutant in mutants:
            target = copy / mutant.path
            original = target.read_text()
            target.write_text(planted(mutant, original))
            started = time.monotonic()
            try:
                code, output = run_fast_tests(copy, mutant.first, args.timeout)
            finally:
                target.write_text(original)
            outcome = judge(mutant.name, code, output, time.monotonic() - started)
            print(f"{outcome.mutant}: {outcome.status} {outcome.caught_by} "
                  f"({outcome.seconds:.0f} s)", flush=True)
            outcomes.append(outcome)
    print()
    print(table(outcomes))
    survived = [o for o in outcomes if o.status != "caught"]
    print(f"\n{len(outcomes) - len(survived)} of {len(outcomes)} mutants caught")
    return 1 if survived else 0


if __name__ == "__main__":
    raise SystemExit(main())
