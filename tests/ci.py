"""Are we in CI, and did CI skip a test it must run? One answer for every fixture.

- :func:`in_ci` is the only place that reads ``CI``. Any value except an empty
  one, ``0``, ``false``, ``no`` or ``off`` (any case) means CI: a typo such as
  ``CI=on`` must make the required tests run, never quietly skip them.
- The tests marked with a name in :data:`REQUIRED_IN_CI` (the README's Postgres,
  browser, JupyterHub and grading-sandbox tests) skip on a student machine that lacks
  the server, the browser, the hub's environment or bubblewrap. Under CI a skip of one
  of them fails the whole run: the two hooks below, imported by ``tests/conftest.py``,
  note such skips as they happen and set a non-zero exit status at the end of the
  session, naming each test.
- :data:`LONGEST_FIRST`: the order in which ``make test`` hands files to its workers.
"""

from __future__ import annotations

import os

import pytest

REQUIRED_IN_CI = ("postgres", "browser", "hub", "sandbox")
NOT_CI = ("", "0", "false", "no", "off")
_skipped_required: list[str] = []


def in_ci(environ: dict[str, str] | None = None) -> bool:
    """True when the ``CI`` variable is set to anything but a "no" (see the module doc)."""
    value = (os.environ if environ is None else environ).get("CI", "")
    return value.strip().lower() not in NOT_CI


def required_markers(item: pytest.Item) -> list[str]:
    return [name for name in REQUIRED_IN_CI if item.get_closest_marker(name) is not None]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    skipped = report.skipped and not hasattr(report, "wasxfail")  # an xfail is not a skip
    if skipped and in_ci() and required_markers(item):
        _skipped_required.append(f"{item.nodeid} ({', '.join(required_markers(item))})")
    return report


def pytest_sessionfinish(session, exitstatus):
    if not _skipped_required or not in_ci():
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    lines = [f"CI: {len(_skipped_required)} required test(s) skipped; in CI the "
             f"{', '.join(REQUIRED_IN_CI)} tests must run:"]
    lines += [f"  {name}" for name in _skipped_required]
    if reporter is not None:
        reporter.write_line("\n".join(lines), red=True)
    if session.exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


# The files that take longest, longest first (wall seconds of each file run alone, measured
# 2026-12-02: 81, 80, 71, 70, 51, 49, 44, 31, 25, 22, 20, 20, 18, 15; the week files got quicker
# once they graded one wrong answer per exercise with nbgrader and forked for the rest). `make
# test` runs the files on its workers in this order (`--dist loadfile --no-loadscope-reorder`),
# so the workers end together instead of one finishing a long file alone; the other files
# follow in the usual order. tests/test_ci.py checks each name is a real file.
LONGEST_FIRST = (
    "test_class_grading.py", "test_student_experience.py", "test_as_a_student.py",
    "test_jupyterhub.py", "test_week7.py", "test_week5.py", "test_docs_instructors.py",
    "test_term.py",
    "test_week6.py", "test_week4.py", "test_week2.py", "test_hub_formgrader.py",
    "test_student_edition.py", "test_week3.py", "test_week1.py",
)


def pytest_collection_modifyitems(items):
    rank = {name: place for place, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: files stay whole
