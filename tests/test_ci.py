"""CI is decided in one place, .ci/run declares it, and under CI a required test cannot skip."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from ci import DURATIONS_SEED, NOT_CI, in_ci

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"


@pytest.mark.parametrize(("value", "ci"), [
    ("true", True), ("1", True), ("yes", True), ("on", True), ("TRUE", True), (" github ", True),
    ("", False), ("0", False), ("false", False), ("No", False), ("off", False), (None, False),
])
def test_in_ci_reads_every_spelling_the_same_way(value, ci):
    assert in_ci({} if value is None else {"CI": value}) is ci


def test_every_fixture_asks_the_same_function():
    readers = [p.relative_to(ROOT).as_posix() for p in TESTS.rglob("*.py")
               if re.search(r"""(\.get\(|\[)\s*["']CI["']""", p.read_text())]
    assert readers == ["tests/ci.py"], "only tests/ci.py may read CI from the environment"
    for fixture in ("tests/fixtures_pg.py", "tests/browser/conftest.py", "tests/hubclass.py"):
        assert "from ci import in_ci" in (ROOT / fixture).read_text(), fixture


def test_ci_run_exports_ci_true_itself(tmp_path):
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "make").write_text('#!/bin/sh\necho "make $* with CI=$CI"\n')
    (fake / "make").chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env["PATH"] = f"{fake}{os.pathsep}{env['PATH']}"
    done = subprocess.run(["bash", str(ROOT / ".ci" / "run")], env=env, capture_output=True,
                          text=True, timeout=60, check=True)
    assert done.stdout.strip() == "make test-all with CI=true"


def test_under_ci_a_skipped_required_test_fails_the_run(tmp_path):
    (tmp_path / "conftest.py").write_text(
        f"import sys\nsys.path.insert(0, {str(TESTS)!r})\n"
        "from ci import pytest_runtest_makereport, pytest_sessionfinish  # noqa\n")
    (tmp_path / "test_required.py").write_text(
        "import pytest\n\n"
        "@pytest.mark.postgres\ndef test_needs_a_server():\n    pytest.skip('no server here')\n\n"
        "def test_optional():\n    pytest.skip('not required')\n\n"
        "def test_passes():\n    pass\n")
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"

    def run(**extra: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                               "-W", "ignore::pytest.PytestUnknownMarkWarning", str(tmp_path)],
                              cwd=tmp_path, env={**env, **extra}, capture_output=True,
                              text=True, timeout=120)

    student = run()
    assert student.returncode == 0, student.stdout
    for value in ("true", "on"):
        ci = run(CI=value)
        assert ci.returncode == 1, ci.stdout
        assert "CI: 1 required test(s) skipped" in ci.stdout
        assert "test_required.py::test_needs_a_server (postgres)" in ci.stdout
        assert "test_optional" not in ci.stdout.split("CI: 1 required")[1]
    assert "off" in NOT_CI


def test_the_committed_durations_name_real_test_files_and_order_them_longest_first():
    """The seed a clone without a cache starts from: measured seconds of real files."""
    files = {p.name for p in Path(__file__).parent.rglob("test_*.py")}
    seed = json.loads(DURATIONS_SEED.read_text())
    assert set(seed) <= files and len(seed) > len(files) // 2, set(seed) - files
    assert list(seed.values()) == sorted(seed.values(), reverse=True)


def test_the_run_orders_files_by_their_measured_seconds(tmp_path):
    """A run records each file's seconds in pytest's cache; the next run puts the slowest
    file first."""
    (tmp_path / "conftest.py").write_text(
        f"import sys\nsys.path.insert(0, {str(Path(__file__).parent)!r})\n"
        "from ci import pytest_collection_modifyitems, pytest_runtest_logreport, "
        "pytest_sessionfinish  # noqa: F401\n")
    (tmp_path / "test_quick.py").write_text("def test_quick():\n    pass\n")
    (tmp_path / "test_slow.py").write_text(
        "import time\n\ndef test_slow():\n    time.sleep(0.3)\n")

    def order() -> list[str]:
        done = subprocess.run([sys.executable, "-m", "pytest", "-v", "-p", "no:randomly",
                               "test_quick.py", "test_slow.py"], cwd=tmp_path,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stdout
        return [line.split("::")[0] for line in done.stdout.splitlines() if "PASSED" in line]

    assert order() == ["test_quick.py", "test_slow.py"]  # nothing measured: as given
    assert order() == ["test_slow.py", "test_quick.py"]
