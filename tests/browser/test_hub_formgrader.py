"""The instructor on the class's JupyterHub, in a real browser: log in once, open the formgrader.

A hub started from ``scripts/hub/jupyterhub_config.py`` (as ``tests/test_jupyterhub.py``
starts it, with the instructor only), Debian's Chromium: the hub's login page with the
class password, the hub spawns the instructor's own JupyterLab, *Nbgrader > Formgrader*
names the formgrader's address, the instructor opens it in a tab of its own (JupyterHub
forbids framing it inside JupyterLab), and its Manage Assignments table lists week 5
(read from the page).
Screenshots in ``test-artifacts/browser/hub-formgrader/``. Skips (fails in CI) when
Chromium or the hub's environment cannot be had.
"""

from __future__ import annotations

import re
import time
from urllib.parse import urljoin

import pytest
from hubclass import ClassHub, hub_environment

pytestmark = [pytest.mark.browser, pytest.mark.hub]
VIEWPORT = {"width": 1400, "height": 1000}


@pytest.fixture(scope="module")
def instructor_hub():
    with hub_environment() as env:
        hub = ClassHub.start(env, "browser", students=0)
        try:
            hub.give_course()
            yield hub
        finally:
            hub.stop()


def test_the_instructor_logs_in_through_the_hub_and_finds_week5_in_the_formgrader(
        browser, artifacts, instructor_hub):
    hub = instructor_hub
    folder = artifacts / "hub-formgrader"
    folder.mkdir(parents=True, exist_ok=True)
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    page.set_default_timeout(60_000)
    started = time.monotonic()
    step = 0

    def shot(name: str) -> None:
        nonlocal step
        step += 1
        page.screenshot(path=str(folder / f"{step:02d}-{name}.png"))
        print(f"{name}: {time.monotonic() - started:.1f} s")

    try:
        page.goto(f"{hub.url}/hub/login")
        page.fill("#username_input", hub.instructor)
        page.fill("#password_input", hub.password)
        shot("login")
        page.click("#login_submit")
        # The hub spawns the instructor's server and sends the browser on to JupyterLab.
        page.wait_for_url(re.compile(rf"/user/{hub.instructor}/lab"), timeout=240_000)
        page.get_by_role("menuitem", name="Nbgrader", exact=True).wait_for()
        shot("jupyterlab")

        # JupyterHub (4.1+) forbids framing a user's server (Content-Security-Policy
        # frame-ancestors 'none'), so the Formgrader panel's frame stays blank; as nbgrader's
        # docs advise, the instructor opens the formgrader in a browser tab of its own.
        page.get_by_role("menuitem", name="Nbgrader", exact=True).click()
        page.get_by_role("menuitem", name="Formgrader", exact=True).click()
        address = page.locator("#formgrader iframe").get_attribute("src")
        assert address and f"/user/{hub.instructor}/formgrader" in address, address
        tab = context.new_page()
        tab.set_default_timeout(60_000)
        tab.goto(urljoin(page.url, address))
        page = tab  # screenshots from here on show the formgrader's tab
        row = tab.locator("tbody tr", has_text="week5").first
        row.wait_for(timeout=120_000)
        shot("formgrader")
        names = [text.strip() for text in tab.locator("tbody tr td:first-child").all_inner_texts()]
        assert "week5" in names, names
    except BaseException:
        page.screenshot(path=str(folder / "FAILED.png"))
        raise
    finally:
        context.close()
