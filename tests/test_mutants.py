"""The mutation check (scripts/mutants.py) stays usable: every mutant still applies to the
code as it is, a bad name is refused in one line, and only a real test failure counts as caught."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "mutants.py"
spec = importlib.util.spec_from_file_location("mutants", SCRIPT)
mutants = importlib.util.module_from_spec(spec)
sys.modules["mutants"] = mutants  # dataclasses look their module up there
spec.loader.exec_module(mutants)


@pytest.mark.parametrize("mutant", mutants.MUTANTS, ids=lambda m: m.name)
def test_every_mutant_still_plants_its_bug(mutant):
    text = (mutants.REPO / mutant.path).read_text()
    assert mutants.planted(mutant, text) != text
    assert all((mutants.REPO / f).is_file() for f in mutant.first)


def test_the_audit_and_every_core_module_have_a_mutant():
    touched = {m.path for m in mutants.MUTANTS}
    for path in ("course/world/world.py", "course/world/billing.py", "course/durable/guard.py",
                 "course/durable/lease.py", "course/durable/idempotency.py",
                 "course/crash/harness.py", "course/base/crashpoints.py",
                 "course/grader/scoring.py", "tests/ci.py", "bench/fork_vs_fresh.py"):
        assert path in touched, path


def test_a_bad_request_is_refused_in_one_line(capsys):
    assert mutants.main(["--only", "ledger-doubles", "no-such-bug"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "unknown mutant 'no-such-bug'" in err[0]
    gone = mutants.Mutant("gone", "x", "course/world/world.py", "no such text", "y")
    with pytest.raises(mutants.MutantError, match="no longer applies"):
        mutants.planted(gone, "some code")


def test_only_a_failing_test_counts_as_caught():
    failed = "F\nFAILED tests/test_ledger.py::test_doubles - assert [] == [...]\n1 failed"
    assert mutants.judge("m", 1, failed, 1.0).caught_by == "tests/test_ledger.py::test_doubles"
    assert mutants.judge("m", 0, "12 passed", 1.0).status == "SURVIVED"
    broken = mutants.judge("m", 2, "ERROR: usage", 1.0)
    assert broken.status.startswith("error") and broken.status != "caught"
    assert mutants.judge("m", -1, "timed out after 900 s", 1.0).status.startswith("error")


def test_the_likely_catcher_runs_first_and_every_test_file_still_runs():
    paths = mutants.test_paths(mutants.REPO, ("tests/test_ledger.py",))
    assert paths[0] == "tests/test_ledger.py" and paths.count("tests/test_ledger.py") == 1
    assert "tests/browser" in paths and "tests/test_billing.py" in paths
    every = {f"tests/{p.name}" for p in (mutants.REPO / "tests").glob("test_*.py")}
    assert every - set(paths) == {"tests/test_mutants.py"}  # it would "catch" every mutant
