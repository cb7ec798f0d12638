"""Fixtures for the browser tests: one JupyterLab and one headless Chromium per session.

- ``chromium``: Debian's Chromium (``scripts/ensure-package.sh`` installs it when
  missing). When it cannot be had, the tests skip with a one-line reason, except in
  CI (:func:`ci.in_ci`), where they fail: there they must run.
- ``lab_server``: JupyterLab started exactly as ``make lab`` starts it (``python -m
  course.classroom.lab``), on a free port on 127.0.0.1 with a random token, serving a
  throwaway copy of the course taken when the session starts (Validate saves the
  notebook before it checks it; the repository must not change). Its kernels
  import that copy's ``course/``. Every Jupyter folder and setting is isolated
  under a temporary folder (autosave and the kernel dialog off; the news question is
  left to make lab's own settings). Its log is
  ``test-artifacts/browser/jupyterlab-server.log``.
- ``lab``: one page on that server for the whole session (JupyterLab's code is
  then cached), wrapped in :class:`labpage.LabPage`; each test opens its notebook
  afresh (new kernel). Screenshots go to ``test-artifacts/browser/<test>/``, plus
  a ``FAILED`` screenshot when the test fails; each step's seconds go to
  ``test-artifacts/browser/timings.txt``.
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from ci import in_ci
from labpage import LabPage, write_timings
from labserver import (
    REPO,
    LabServer,
    course_copy,
    empty_once_per_run,
    free_port,
    isolated_env,
    lab_args,
)

ARTIFACTS = REPO / "test-artifacts" / "browser"
ENSURE = REPO / "scripts" / "ensure-package.sh"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]
VIEWPORT = {"width": 1400, "height": 1000}


def unavailable(reason: str) -> None:
    """Skip with ``reason``, or fail in CI, where the browser tests must run."""
    if in_ci():
        pytest.fail(f"{reason} (CI: the browser tests must run here)", pytrace=False)
    pytest.skip(reason)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    report = yield
    setattr(item, f"rep_{report.when}", report)
    return report


@pytest.fixture(scope="session")
def chromium() -> str:
    """Path of Debian's ``chromium``, installed by the project's script when missing."""
    path = shutil.which("chromium")
    if path is None and ENSURE.exists():
        subprocess.run(["bash", str(ENSURE), "chromium", "chromium", "the browser tests"],
                       check=False)
        path = shutil.which("chromium")
    if path is None:
        unavailable("Chromium is not installed and scripts/ensure-package.sh could not "
                    "install it (needs root and apt-get)")
    return str(path)


@pytest.fixture(scope="session")
def artifacts() -> Path:
    """``test-artifacts/browser/``, emptied once per test run. Under pytest-xdist each
    worker has a session of its own: a worker that reaches its browser tests later must not
    delete what another worker is still writing (``make lab``'s log once vanished in the
    middle of its test that way)."""
    empty_once_per_run(ARTIFACTS, os.environ.get("PYTEST_XDIST_TESTRUNUID")
                       or f"alone-{os.getpid()}")
    return ARTIFACTS


@pytest.fixture(scope="session")
def browser(chromium: str) -> Iterator:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        unavailable("the Python package playwright is missing ('make setup' installs it)")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture(scope="session")
def lab_server(tmp_path_factory, artifacts: Path, chromium: str) -> Iterator[LabServer]:
    base = tmp_path_factory.mktemp("jupyterlab")
    course = course_copy(REPO, base / "course")
    env = isolated_env(base / "jupyter")
    env["PYTHONPATH"] = os.pathsep.join(  # kernels import the copied course/, like the files
        filter(None, [str(course), env.get("PYTHONPATH")]))
    port, token = free_port(), secrets.token_urlsafe(24)
    command = [sys.executable, "-m", "course.classroom.lab", "--no-browser", *lab_args(port, token)]
    server = LabServer.start(command, cwd=course, env=env, port=port, token=token,
                             log_path=artifacts / "jupyterlab-server.log")
    try:
        serving = [line for line in server.log_tail(400).splitlines()
                   if "Serving notebooks from local directory" in line]
        assert serving and serving[-1].rstrip().endswith(str(course)), (
            f"the test server must serve the throwaway copy {course}, not the repository: "
            f"{serving}"
        )
        server.root = course
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def session_page(browser, lab_server: LabServer) -> Iterator[LabPage]:
    """One page for the whole session: JupyterLab's code loads from the cache after the first."""
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    page.set_default_timeout(30_000)
    page.on("dialog", lambda dialog: dialog.accept())  # "leave the page?" when a test moves on
    yield LabPage(page, lab_server, ARTIFACTS)
    context.close()


@pytest.fixture
def lab(session_page: LabPage, artifacts: Path, request) -> Iterator[LabPage]:
    """The session's page, with this test's screenshot folder and step timings."""
    lab = session_page
    lab.begin(artifacts / request.node.name)
    try:
        yield lab
    finally:
        report = getattr(request.node, "rep_call", None)
        if report is not None and report.failed:
            try:
                lab.shot("FAILED")
            except Exception as error:  # the page may be gone; the failure is what matters
                print(f"no FAILED screenshot: {error}")
        write_timings(ARTIFACTS, request.node.name, lab.timings)
