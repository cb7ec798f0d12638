"""The course's website (``make site``, ``website/build.py``) in headless Chromium.

One build per session, as ``make site`` builds it (``python -m website.build``) but into a
temporary folder (the runs of the notebooks are shared with ``make site``'s cache:
``website/_build/executed/``, so a week already run is not run again), served over HTTP on
127.0.0.1 as any static host would. Then, for every page: it loads with no console error,
no page error and no failed request; every image on it has loaded; a screenshot of its top
goes to ``test-artifacts/site/<page>.png`` (and, on a week page with plots, of its first
plot to ``<page>-plot.png``). Every internal link of every page resolves (the file, and
the ``#anchor`` in it). A week page shows every picture its run made (plots, widgets'
pictures) and the box that says how to run it. In CI these tests must run (``browser``).
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import re
import subprocess
import sys
import threading
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import nbformat
import pytest
from labserver import REPO, empty_once_per_run

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ARTIFACTS = REPO / "test-artifacts" / "site"
VIEWPORT = {"width": 1300, "height": 900}
WEEK_PAGE = re.compile(r"week(\d+)\.html")


@pytest.fixture(scope="session")
def site(tmp_path_factory) -> Path:
    """The site, built by the course's own builder into a temporary folder."""
    work = tmp_path_factory.mktemp("site")
    out = work / "html"
    done = subprocess.run([sys.executable, "-m", "website.build", "--out", str(out),
                           "--work", str(work)], cwd=REPO, capture_output=True, text=True,
                          timeout=1800)
    assert done.returncode == 0, f"make site failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    assert "leak search:" in done.stdout, done.stdout
    return out


@pytest.fixture(scope="session")
def served(site: Path):
    """``http://127.0.0.1:<port>/``, serving the site from a thread."""
    handler = functools.partial(_QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:  # no line per request in the test's output
        pass


@pytest.fixture(scope="session")
def shots() -> Path:
    empty_once_per_run(ARTIFACTS, os.environ.get("PYTEST_XDIST_TESTRUNUID")
                       or f"alone-{os.getpid()}")
    return ARTIFACTS


def pages(site: Path) -> list[str]:
    return sorted(p.name for p in site.glob("*.html"))


def test_the_site_has_a_home_page_every_week_and_the_instructors_guide(site: Path):
    names = pages(site)
    weeks = sorted(int(p.parent.name[4:]) for p in REPO.glob("solutions/week*/week*.ipynb"))
    assert {"index.html", "instructors.html", *(f"week{n}.html" for n in weeks)} <= set(names)
    home = re.sub(r"<[^>]+>", "", (site / "index.html").read_text())  # highlighted: spans
    assert "Who it is for" in home and "How to start" in home and "make lab" in home
    links = (site / "index.html").read_text().split('<article', 1)[1]
    positions = [links.find(f'href="week{n}.html"') for n in weeks]  # the weeks, in order
    assert -1 not in positions and positions == sorted(positions), positions


def test_every_page_loads_with_no_console_error_and_its_images(browser, served, site, shots):
    context = browser.new_context(viewport=VIEWPORT)
    problems: list[str] = []
    try:
        for name in pages(site):
            page = context.new_page()
            said: list[str] = []
            page.on("console", lambda m, said=said: said.append(f"console {m.type}: {m.text}")
                    if m.type == "error" else None)
            page.on("pageerror", lambda e, said=said: said.append(f"page error: {e}"))
            page.on("requestfailed", lambda r, said=said: said.append(
                f"request failed: {r.url} ({r.failure})"))
            page.on("response", lambda r, said=said: said.append(
                f"HTTP {r.status}: {r.url}") if r.status >= 400 else None)
            page.goto(served + name, wait_until="load")
            page.wait_for_load_state("networkidle")
            broken = page.evaluate("""() => Array.from(document.images)
                .filter(i => !i.complete || i.naturalWidth === 0).map(i => i.src.slice(0, 80))""")
            said += [f"image not shown: {src}" for src in broken]
            page.screenshot(path=str(shots / f"{Path(name).stem}.png"))
            if WEEK_PAGE.fullmatch(name):
                said += _week_page_problems(page, site, name, shots)
            problems += [f"{name}: {line}" for line in said]
            page.close()
    finally:
        context.close()
    assert problems == []


def _week_page_problems(page, site: Path, name: str, shots: Path) -> list[str]:
    """A week page: the box that says how to run it, and every picture its run made."""
    number = WEEK_PAGE.fullmatch(name).group(1)
    problems = []
    box = page.locator(".admonition", has_text="Run this week yourself")
    if box.count() != 1 or f"week{number}/week{number}.ipynb" not in box.inner_text():
        problems.append("no box saying how to run it (make lab, make test, the notebook)")
    expected = _pictures_in(site.parent / "src" / f"week{number}.ipynb")
    shown = page.locator(".cell_output img")
    if shown.count() != expected:
        problems.append(f"{shown.count()} pictures in the outputs, the run made {expected}")
    visible = page.evaluate("""() => Array.from(document.querySelectorAll('.cell_output img'))
        .filter(i => i.naturalWidth > 50 && i.getBoundingClientRect().width > 50).length""")
    if visible != expected:
        problems.append(f"{visible} of the {expected} pictures are shown at a readable size")
    if expected:
        shown.first.scroll_into_view_if_needed()
        page.screenshot(path=str(shots / f"week{number}-plot.png"))
    return problems


def _pictures_in(notebook: Path) -> int:
    """Pictures the page's notebook holds in its outputs: PNGs, and images in HTML (the
    widgets' pictures)."""
    count = 0
    for cell in nbformat.read(notebook, as_version=4).cells:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if "image/png" in data:
                count += 1
            elif "text/html" in data:
                count += len(re.findall(r"<img\b", data["text/html"]))
    return count


def test_the_weeks_with_plots_show_them(site: Path):
    """Week 2's pⁿ explorer and week 5's crash lab and explorer draw pictures: their pages
    hold them, as image files or as the widgets' pictures."""
    for number in (2, 5):
        assert _pictures_in(site.parent / "src" / f"week{number}.ipynb") >= 1, number
        assert "<img" in (site / f"week{number}.html").read_text(), number


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.images: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if "id" in attrs:
            self.ids.add(attrs["id"])
        if tag == "a" and attrs.get("href"):
            self.links.append(attrs["href"])
        if tag in ("img", "script") and attrs.get("src"):
            self.images.append(attrs["src"])
        if tag == "link" and attrs.get("href"):
            self.links.append(attrs["href"])


@functools.cache
def _parsed(path: Path) -> _Links:
    parser = _Links()
    parser.feed(path.read_text())
    return parser


def test_every_internal_link_and_image_resolves(site: Path):
    broken = []
    for name in pages(site):
        parsed = _parsed(site / name)
        for target in [*parsed.links, *parsed.images]:
            parts = urlsplit(target)
            if parts.scheme in ("http", "https", "mailto") or target.startswith("data:"):
                continue
            assert not parts.scheme and not parts.netloc, f"{name}: {target}"
            file = (site / name).parent / unquote(parts.path) if parts.path else site / name
            if file.is_dir():
                file = file / "index.html"
            if not file.resolve().is_relative_to(site.resolve()) or not file.is_file():
                broken.append(f"{name}: {target} (no such file)")
            elif parts.fragment and file.suffix == ".html" and (
                    unquote(parts.fragment) not in _parsed(file.resolve()).ids):
                broken.append(f"{name}: {target} (no such anchor)")
    assert broken == []


def test_no_page_loads_anything_from_the_network(site: Path):
    """Offline: no script, style sheet or image from another host."""
    remote = []
    for path in site.rglob("*.html"):
        parsed = _parsed(path)
        remote += [f"{path.name}: {src}" for src in parsed.images if "//" in src.split("?")[0]
                   and not src.startswith("data:")]
        remote += [f"{path.name}: {href}" for href in re.findall(
            r'<link[^>]+href="(https?://[^"]+)"', path.read_text())]
    assert remote == []


def test_the_state_of_a_second_build_says_nothing_ran(site: Path):
    """The session's build recorded each week's page key; a second build with nothing
    changed runs no notebook and rewrites no page (the runs are cached by their inputs)."""
    state = json.loads((site.parent / "state.json").read_text())
    weeks = {p.parent.name for p in REPO.glob("solutions/week*/week*.ipynb")}
    assert weeks and weeks <= set(state)
    done = subprocess.run([sys.executable, "-m", "website.build", "--out", str(site),
                           "--work", str(site.parent)], cwd=REPO, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "running" not in done.stdout and done.stdout.count("not run again") == len(weeks)


def _on_every_page(browser, served: str, site: Path, script: str, viewport=VIEWPORT,
                   only=None) -> dict[str, object]:
    """``script``'s answer on each page (week pages only with ``only=WEEK_PAGE``)."""
    context = browser.new_context(viewport=viewport)
    answers = {}
    try:
        page = context.new_page()
        for name in pages(site):
            if only is not None and not only.fullmatch(name):
                continue
            page.goto(served + name, wait_until="load")
            answers[name] = page.evaluate(script)
    finally:
        context.close()
    return answers


def test_the_slider_pictures_show_their_value(browser, served, site: Path):
    """A slider's picture puts its knob at its value: without a step the browser rounded
    0.95 (between 0.5 and 1.0) to 0.5 and drew the knob at the far left."""
    found = _on_every_page(browser, served, site, """() => Array.from(
        document.querySelectorAll('.static-widget input[type=range]')).map(i =>
        [i.getAttribute('value'), i.valueAsNumber, i.getAttribute('step')])""",
                           only=WEEK_PAGE)
    sliders = [(name, *s) for name, found_there in found.items() for s in found_there]
    assert any(name == "week2.html" for name, *_ in sliders), "week 2's sliders are pictured"
    wrong = [s for s in sliders if abs(float(s[1]) - s[2]) > 1e-9]
    assert wrong == [], wrong


def test_no_code_or_output_block_is_wider_than_its_column_at_1280_px(browser, served,
                                                                     site: Path):
    """At 1280 px a third of week 5's blocks scrolled sideways, cutting their messages;
    they wrap now."""
    found = _on_every_page(browser, served, site, """() => {
        const article = document.querySelector('article[role=main]') ?? document.body;
        const right = article.getBoundingClientRect().right;
        return Array.from(article.querySelectorAll('pre')).filter(p =>
            p.scrollWidth > p.clientWidth + 1 || p.getBoundingClientRect().right > right + 1)
          .map(p => `${p.scrollWidth} > ${p.clientWidth} px: ${p.innerText.slice(0, 60)}`);
    }""", viewport={"width": 1280, "height": 900})
    wide = {name: blocks for name, blocks in found.items() if blocks}
    assert wide == {}, wide


def test_no_week_page_prints_a_scratch_or_build_folder(site: Path):
    """Week 6 printed its runs' folders (``/tmp/week6-13ywa57u/tmp9gdcvtyx/...``) and the
    throwaway PostgreSQL's socket folder: noise on a page, and the build machine's."""
    import tempfile

    folders = re.compile(rf"({re.escape(tempfile.gettempdir())}/|{re.escape(str(REPO))}|"
                         r"_build/|course-site-)")
    printed = {}
    for page in sorted(site.glob("week*.html")):
        text = re.sub(r"<[^>]+>", "", page.read_text())
        found = [text[max(m.start() - 40, 0):m.end() + 40] for m in folders.finditer(text)]
        if found:
            printed[page.name] = found[:5]
    assert printed == {}, printed
