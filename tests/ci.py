"""Are we in CI, and did CI skip a test it must run? One answer for every fixture.

- :func:`in_ci` is the only place that reads ``CI``. Any value except an empty
  one, ``0``, ``false``, ``no`` or ``off`` (any case) means CI: a typo such as
  ``CI=on`` must make the required tests run, never quietly skip them.
- The tests marked with a name in :data:`REQUIRED_IN_CI` (the README's Postgres,
  browser, JupyterHub and grading-sandbox tests), and those using a fixture named in
  :data:`REQUIRED_FIXTURES_IN_CI` (week 7's real Claude Code CLI), skip on a student
  machine that lacks the server, the browser, the hub's environment, bubblewrap or the
  CLI. Under CI a skip of one of them fails the whole run: the two hooks below,
  imported by ``tests/conftest.py``, note such skips as they happen and set a non-zero
  exit status at the end of the session, naming each test.
- :func:`file_seconds`: how long each test file took when last measured, the order in which
  ``make test-all`` hands files to its workers (longest first).
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from pathlib import Path

import pytest

REQUIRED_IN_CI = ("postgres", "browser", "hub", "sandbox")
# Tests that use one of these fixtures are required in CI too: ``claude_cli`` is the real
# Claude Code CLI (week 7; ``make claude-cli`` installs it, ``make test-all`` runs that).
REQUIRED_FIXTURES_IN_CI = ("claude_cli",)
NOT_CI = ("", "0", "false", "no", "off")
_skipped_required: list[str] = []


def in_ci(environ: dict[str, str] | None = None) -> bool:
    """True when the ``CI`` variable is set to anything but a "no" (see the module doc)."""
    value = (os.environ if environ is None else environ).get("CI", "")
    return value.strip().lower() not in NOT_CI


def required_markers(item: pytest.Item) -> list[str]:
    return [name for name in REQUIRED_IN_CI if item.get_closest_marker(name) is not None] + [
        name for name in REQUIRED_FIXTURES_IN_CI if name in getattr(item, "fixturenames", ())]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    skipped = report.skipped and not hasattr(report, "wasxfail")  # an xfail is not a skip
    if skipped and in_ci() and required_markers(item):
        _skipped_required.append(f"{item.nodeid} ({', '.join(required_markers(item))})")
    return report


def pytest_sessionfinish(session, exitstatus):
    record_durations(session)
    if not _skipped_required or not in_ci():
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    lines = [f"CI: {len(_skipped_required)} required test(s) skipped; in CI the "
             f"{', '.join(REQUIRED_IN_CI + REQUIRED_FIXTURES_IN_CI)} tests must run:"]
    lines += [f"  {name}" for name in _skipped_required]
    if reporter is not None:
        reporter.write_line("\n".join(lines), red=True)
    if session.exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


# The order in which `make test-all` hands files to its workers (`--dist loadfile
# --no-loadscope-reorder`): the longest first, so the workers end together instead of one
# finishing a long file alone. The seconds are measured, not kept by hand: every run adds up
# each file's setup, call and teardown times (pytest's own report durations, the figures
# `--durations` prints) and keeps them in pytest's cache; a clone without a cache (CI) starts
# from DURATIONS_SEED, the figures of a whole run committed with the code, which
# `python tests/ci.py seed` rewrites from the cache. Files that were never measured go last,
# in the usual order.
DURATIONS_SEED = Path(__file__).with_name("durations.json")
CACHE_KEY = "course/file-seconds"
_measured: dict[str, float] = defaultdict(float)


def file_seconds(config: pytest.Config | None = None) -> dict[str, float]:
    """``{test file name: seconds}`` of the last run that measured each, else the seed."""
    seconds = json.loads(DURATIONS_SEED.read_text()) if DURATIONS_SEED.is_file() else {}
    cache = getattr(config, "cache", None)
    if cache is not None:
        seconds.update(cache.get(CACHE_KEY, {}))
    return seconds


def pytest_runtest_logreport(report):
    _measured[Path(report.nodeid.split("::")[0]).name] += report.duration  # the file collected


def pytest_collection_modifyitems(config, items):
    seconds = file_seconds(config)
    items.sort(key=lambda item: -seconds.get(item.path.name, 0.0))  # stable: files stay whole


def record_durations(session) -> None:
    cache = getattr(session.config, "cache", None)
    if cache is not None and _measured and not hasattr(session.config, "workerinput"):
        cache.set(CACHE_KEY, {**cache.get(CACHE_KEY, {}),
                              **{name: round(s, 1) for name, s in _measured.items()}})


if __name__ == "__main__":  # python tests/ci.py seed: the cache's figures become the seed
    import subprocess
    import sys

    assert sys.argv[1:] == ["seed"], "usage: python tests/ci.py seed"
    cached = Path(__file__).parent.parent / ".pytest_cache" / "v" / CACHE_KEY
    figures = json.loads(cached.read_text())
    DURATIONS_SEED.write_text(json.dumps(dict(sorted(figures.items(), key=lambda kv: -kv[1])),
                                         indent=1) + "\n")
    subprocess.run(["git", "diff", "--stat", str(DURATIONS_SEED)], check=False)
