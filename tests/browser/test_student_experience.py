"""Week 5 as a student and an instructor meet it: real JupyterLab, real Chromium, real kernel.

- The release (``week5/week5.ipynb``, what a student opens): Run All runs until
  the first exercise, which stops it with ``NotImplementedError`` under
  ``YOUR CODE HERE`` and nothing before it fails; the crash lab kills the graph
  where the student points it and its ledger shows the charges that really
  happened (two for the naive graph killed right after ``charge``, one for the
  keyed graph); the compounding plot is an image that changes when a slider
  moves; nbgrader's Validate button reports failing tests.
- The solution (``solutions/week5/week5.ipynb``): Run All executes every cell
  with no error output, and Validate reports success.
- ``make lab WEEK=5`` itself starts JupyterLab on the course and opens week 5's
  notebook in the browser it launches.
- The learner's lab (``make lab``) has Validate and the Assignments list but none of
  nbgrader's instructor tools (Formgrader, Course List, Create Assignment) and no news
  question; ``make lab ROLE=instructor`` has the instructor tools.
- The crash lab offers only the crash points the chosen graph's node reaches.
- First of all, the page helpers can fail: on a small notebook with a deliberate
  error they see the error, the Run All that stopped there and a broken widget.

Each step leaves a screenshot in ``test-artifacts/browser/<test>/``. Every
assertion reads the page, never the kernel or the file on disk.
"""

from __future__ import annotations

import contextlib
import hashlib
import secrets
import stat
import sys
import time
from pathlib import Path

import nbformat
import pytest
from labpage import LabPage, write_timings
from labserver import REPO, LabServer, empty_once_per_run, free_port, isolated_env, lab_args

from course.classroom.lab import first_notebook, week_notebook

pytestmark = pytest.mark.browser

RELEASE = "week5/week5.ipynb"
SOLUTION = "solutions/week5/week5.ipynb"
ALL_PAINTED = """() => Array.from(document.querySelectorAll(
    '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-OutputArea-output img'))
  .every(img => img.complete && img.naturalWidth > 0)"""


def need(lab: LabPage, path: str) -> None:
    """Fail clearly when the notebook is missing from the served copy of the course."""
    if not (lab.server.root / path).exists():
        pytest.fail(f"{path} did not exist when the browser tests started", pytrace=False)


# ---------------------------------------------------------------------- crash lab
def offered_points(lab: LabPage) -> list[str]:
    """The crash points the lab's point dropdown offers right now, as the page shows them."""
    return lab.page.locator(".crashlab-point select").first.evaluate(
        "select => Array.from(select.options).map(o => o.value || o.textContent)")


def choose(lab: LabPage, graph: str, node: str) -> list[str]:
    """Choose graph and node; once the kernel has answered, the points offered for them."""
    for name, value in (("graph", graph), ("node", node)):
        choice = lab.page.locator(f".crashlab-{name} select").first
        choice.select_option(value)
        assert choice.input_value() == value
    lab.wait_idle(settle_s=0.5)  # the kernel has offered the points of the new choice
    return offered_points(lab)


def crash(lab: LabPage, node: str, point: str, graph: str) -> dict[str, object]:
    """Choose graph, node and point in the dropdowns, press Run, read what the page shows."""
    page = lab.page
    status = page.locator(".crashlab-status").first
    lab.wait_idle(settle_s=0.5)  # the previous run has finished drawing
    before = status.inner_text()
    assert point in choose(lab, graph, node), (graph, node, offered_points(lab))
    choice = page.locator(".crashlab-point select").first
    choice.select_option(point)
    assert choice.input_value() == point
    # Let the kernel take the new choices before Run, as a student sees the lab settle.
    lab.wait_idle(settle_s=0.5)
    page.locator("button.crashlab-run").first.click()
    # While it runs the status reads "running: kill at ..."; when done, "... killed at ...".
    deadline = time.monotonic() + 90
    while (text := status.inner_text()) == before or f"killed at {node}/{point}" not in text:
        assert "failed" not in text, f"the crash lab reports: {text}"
        assert time.monotonic() < deadline, (
            f"the crash lab did not finish {graph} {node}/{point}; its status reads {text!r}")
        page.wait_for_timeout(200)
    assert f"{graph} graph" in text, text
    tables = lab.tables(page.locator(".crashlab-ledger").first)
    assert "ledger" in tables and "charges" in tables, f"ledger tables: {list(tables)}"
    ledger_charges = sum(int(row.get("charges") or 0) for row in tables["ledger"])
    charge_rows = [row for row in tables["charges"] if row.get("id", "").startswith("ch_")]
    return {
        "status": text,
        "verdict": page.locator(".crashlab-verdict").first.inner_text(),
        "ledger_charges": ledger_charges,
        "charge_rows": charge_rows,
    }


# ---------------------------------------------------------------------- explorer
def image_pixels(image) -> bytes:
    """The plot as the browser paints it (waits until the PNG has loaded)."""
    image.wait_for()
    image.page.wait_for_function(
        "img => img.complete && img.naturalWidth > 0", arg=image.element_handle())
    return image.screenshot()


def drag_handle(lab: LabPage, slider: str, dx: float) -> None:
    handle = lab.page.locator(f"{slider} .noUi-handle").first
    handle.scroll_into_view_if_needed()
    box = handle.bounding_box()
    assert box is not None, f"the {slider} slider has no handle on the page"
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    lab.page.mouse.move(x, y)
    lab.page.mouse.down()
    lab.page.mouse.move(x + dx, y, steps=8)
    lab.page.mouse.up()


# ---------------------------------------------------------------------- tests
# First, the helpers can fail. The tests after it trust LabPage to say "no errors" and
# "every cell ran"; this one runs a small notebook with a deliberate error in the same
# JupyterLab (written into the server's throwaway copy of the course) and checks that the
# helpers notice, so those passes mean something.
CANARY_CELLS = [
    "import sys\nprint('to stdout')\nprint('a warning, not an error', file=sys.stderr)",
    "import ipywidgets as w\n"
    "healthy = w.Button(description='Healthy')\nhealthy.add_class('canary-healthy')\n"
    "healthy_out = w.Output()\nhealthy_out.add_class('canary-healthy-out')\n"
    "def works(_):\n    with healthy_out:\n        print('pressed and answered')\n"
    "healthy.on_click(works)\n"
    "button = w.Button(description='Press')\nbutton.add_class('canary-button')\n"
    "out = w.Output()\nout.add_class('canary-out')\n"
    "def broken(_):\n    with out:\n        raise RuntimeError('this widget is broken')\n"
    "button.on_click(broken)\ndisplay(w.VBox([healthy, healthy_out, button, out]))",
    "raise ValueError('the canary error')",
    "print('never reached')",
]


def test_the_artifacts_folder_is_emptied_once_per_run_not_once_per_worker(tmp_path):
    folder = tmp_path / "browser"
    folder.mkdir()
    (folder / "from-the-last-run.png").write_text("old")
    empty_once_per_run(folder, "run-1")  # the first worker of run 1
    assert not (folder / "from-the-last-run.png").exists()
    (folder / "make-lab.log").write_text("Opening week1/week1.ipynb")
    empty_once_per_run(folder, "run-1")  # another worker of the same run, later
    assert (folder / "make-lab.log").read_text() == "Opening week1/week1.ipynb"
    empty_once_per_run(folder, "run-2")
    assert sorted(p.name for p in folder.iterdir()) == [".emptied-for-run"]


def test_helpers_see_an_error_a_stopped_run_and_a_dead_widget(lab):
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {
        "name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in CANARY_CELLS]
    nbformat.write(notebook, lab.server.root / "canary.ipynb")

    lab.open("canary.ipynb")
    lab.run_all()
    cells = lab.wait_run_finished(timeout_s=60)
    lab.shot("run-all-stopped-at-the-error")

    assert [c.executed for c in cells] == [True, True, True, False]
    errors = lab.error_outputs(cells)
    assert len(errors) == 1 and "ValueError" in errors[0].text, errors
    assert lab.first_error_cell(cells).index == 2
    assert any("a warning, not an error" in o.text for o in cells[0].outputs)

    with pytest.raises(AssertionError, match="not executed: cell 3"):
        lab.wait_run_finished(timeout_s=3, every_cell=True)

    # A widget that answers is seen answering; a widget whose handler raises is seen failing
    # (its traceback, in its Output, is an error output): a no-op handler would fail both.
    lab.page.locator(".canary-healthy").click()
    wait_for(lambda: "pressed and answered" in lab.page.locator(
        ".canary-healthy-out").inner_text(), "the healthy widget never answered")
    assert [o.text for o in lab.error_outputs()] == [errors[0].text]  # only the canary error
    lab.page.locator(".canary-button").click()
    wait_for(lambda: any("this widget is broken" in o.text for o in lab.error_outputs()),
             "the helpers did not see the broken widget's error")
    assert "RuntimeError" in lab.page.locator(".canary-out").inner_text()


def wait_for(check, message: str, timeout_s: float = 30) -> None:
    """Poll ``check`` until it is true; fail with ``message`` after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while not check():
        assert time.monotonic() < deadline, message
        time.sleep(0.2)


def test_release_runs_to_the_first_exercise_and_its_widgets_work(lab: LabPage):
    need(lab, RELEASE)
    lab.open(RELEASE)
    lab.shot("release-opened")

    lab.run_all()
    cells = lab.wait_run_finished(timeout_s=240)
    stopped = lab.first_error_cell(cells)
    assert stopped is not None, "Run All on the release should stop at the first exercise"
    lab.shot("run-all-stopped-at-exercise-1",
             lab.panel.locator(".jp-CodeCell").nth(stopped.index))
    errors = [o for o in stopped.outputs if o.is_error]
    assert "NotImplementedError" in errors[0].text, errors[0].text
    assert "YOUR CODE HERE" in stopped.source, stopped.source
    before = [c for c in cells if c.index < stopped.index]
    assert before and all(c.executed for c in before), [c.prompt for c in before]
    assert not lab.error_outputs(before), lab.error_outputs(before)
    assert not any(c.executed for c in cells if c.index > stopped.index), (
        "Run All should stop at the first exercise")

    # The crash lab, above the first exercise: kill, resume, read the ledger.
    run_button = lab.page.locator("button.crashlab-run").first
    assert run_button.is_visible(), "the crash lab should be on the page after Run All"
    lab.shot("crashlab-before", run_button)
    naive = crash(lab, "charge", "after_effect", "naive")
    lab.shot("crashlab-naive-charge-after_effect", lab.page.locator(".crashlab-ledger").first)
    assert naive["ledger_charges"] == 2, naive
    assert len(naive["charge_rows"]) == 2, naive
    assert "again" in naive["verdict"], naive["verdict"]

    keyed = crash(lab, "charge", "after_effect", "keyed")
    lab.shot("crashlab-keyed-charge-after_effect", lab.page.locator(".crashlab-ledger").first)
    assert keyed["ledger_charges"] == 1, keyed
    assert len(keyed["charge_rows"]) == 1, keyed
    assert keyed["charge_rows"][0]["idempotency_key"] not in ("", "(none)"), keyed

    early = crash(lab, "charge", "before_effect", "naive")
    lab.shot("crashlab-naive-charge-before_effect", lab.page.locator(".crashlab-ledger").first)
    assert early["ledger_charges"] == 1, early

    # The point dropdown offers what the chosen graph's node reaches: before_record only
    # where a node calls the guard (the keyed graph's charge), and switching updates it.
    plain = ["before_effect", "after_effect", "after_writes", "after_checkpoint"]
    assert choose(lab, "naive", "charge") == plain
    assert choose(lab, "keyed", "charge") == [plain[0], "before_record", *plain[1:]]
    lab.shot("crashlab-keyed-charge-offers-before_record", lab.page.locator(
        ".crashlab-point").first)
    assert choose(lab, "keyed", "email") == plain
    assert choose(lab, "naive", "charge") == plain
    paid = crash(lab, "charge", "before_record", "keyed")
    assert paid["ledger_charges"] == 1 and "NOT KILLED" not in paid["verdict"], paid

    # The compounding explorer: an image, and a slider that redraws it.
    image = lab.page.locator(".compounding-plot img").first
    first = image_pixels(image)
    width = image.evaluate("img => img.naturalWidth")
    assert width >= 300, f"the compounding plot should be a real picture, {width} px wide"
    summary = lab.page.locator(".compounding-summary").first
    readout = lab.page.locator(".compounding-p .widget-readout").first
    p_before, summary_before = float(readout.inner_text()), summary.inner_text()
    lab.shot("explorer-before", image)

    drag_handle(lab, ".compounding-p", dx=-30)
    deadline = time.monotonic() + 30
    while float(readout.inner_text()) == p_before or summary.inner_text() == summary_before:
        assert time.monotonic() < deadline, (
            f"moving the p slider did not redraw: readout {readout.inner_text()!r}, "
            f"summary {summary.inner_text()!r}")
        lab.page.wait_for_timeout(200)
    p_after = float(readout.inner_text())
    assert p_after < p_before, (p_before, p_after)
    n = int(lab.page.locator(".compounding-n .widget-readout").first.inner_text())
    assert f"p = {p_after:.3f}" in summary.inner_text(), summary.inner_text()
    assert f"{p_after ** n:.1%}" in summary.inner_text(), (p_after, n, summary.inner_text())
    deadline = time.monotonic() + 30
    while image_pixels(image) == first:
        assert time.monotonic() < deadline, "the plot did not change after the slider moved"
        lab.page.wait_for_timeout(200)
    lab.shot("explorer-after-moving-p", image)

    # nbgrader's Validate button: the release fails its tests.
    classes, text = lab.validate()
    lab.shot("validate-release")
    assert "validation-failed" in classes, (classes, text[:2000])
    # what to do next first, in a few lines (course/grader/validate.py), not every traceback
    assert text.lstrip().startswith("What to do next: Exercise 1"), text[:2000]
    assert "NotImplementedError" in text and len(text) < 2500, text[:3000]
    assert "The following cell failed" not in text and "Traceback" not in text, text[:2000]
    lab.close_dialog()


def test_solution_runs_clean_and_validates(lab: LabPage):
    need(lab, SOLUTION)
    lab.open(SOLUTION)
    lab.shot("solution-opened")

    lab.run_all()
    cells = lab.wait_run_finished(timeout_s=300, every_cell=True)
    lab.shot("run-all-finished")
    assert lab.kernel_status().endswith("| Idle"), lab.kernel_status()
    assert all(c.executed for c in cells)
    errors = lab.error_outputs(cells)
    assert not errors, "\n\n".join(o.text[:1500] for o in errors)
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    pictures = lab.panel.locator(".jp-OutputArea-output img")
    assert pictures.count() >= 1, "the solution should show its pictures"
    with contextlib.suppress(PlaywrightTimeout):  # the assertion below says what is wrong
        pictures.first.page.wait_for_function(ALL_PAINTED, timeout=15_000)
    painted = pictures.evaluate_all(
        "imgs => imgs.map(img => img.complete && img.naturalWidth > 0)")
    assert all(painted), f"every picture should load; loaded: {painted}"
    assert lab.page.locator(".compounding-plot img").first.is_visible()
    lab.shot("solution-crashlab", lab.page.locator(".crashlab-ledger").first)

    classes, text = lab.validate()
    lab.shot("validate-solution")
    assert "validation-success" in classes, (classes, text[:2000])
    assert "Success" in text, text
    lab.close_dialog()


# ---------------------------------------------------------------------- each role's lab
def nbgrader_menu(page) -> list[str]:
    """The items the Nbgrader menu shows (hidden ones left out), read from the page."""
    page.get_by_role("menuitem", name="Nbgrader", exact=True).click()
    items = page.locator(".lm-Menu:not(.lm-MenuBar) .lm-Menu-item:not(.lm-mod-hidden) "
                         ".lm-Menu-itemLabel").all_inner_texts()
    page.keyboard.press("Escape")
    return [item.strip() for item in items if item.strip()]


def right_sidebar_tabs(page) -> list[str]:
    return page.locator(".jp-SideBar.jp-mod-right .lm-TabBar-tab").evaluate_all(
        "tabs => tabs.map(tab => tab.getAttribute('title') || tab.innerText)")


NEWS = "official Jupyter news"


def no_news(page, seconds: float = 4.0) -> list[str]:
    """The toasts shown in the first ``seconds`` after the notebook opened."""
    page.wait_for_timeout(seconds * 1000)
    return page.locator(".Toastify").all_inner_texts()


def test_the_learners_lab_has_validate_but_no_instructor_tools_and_no_news(lab: LabPage):
    need(lab, RELEASE)
    lab.open(RELEASE)
    toasts = no_news(lab.page)
    assert not any(NEWS in toast for toast in toasts), toasts
    assert nbgrader_menu(lab.page) == ["Assignment List"]
    lab.page.get_by_role("menuitem", name="Nbgrader", exact=True).click()
    lab.shot("learner-nbgrader-menu")
    lab.page.keyboard.press("Escape")
    tabs = right_sidebar_tabs(lab.page)
    assert not any("Create Assignment" in tab for tab in tabs), tabs
    assert lab.panel.locator(".validate-button").is_visible()


def test_make_lab_role_instructor_has_nbgraders_tools(browser, lab_server, artifacts,
                                                       tmp_path: Path):
    env = isolated_env(tmp_path / "jupyter")
    env["PYTHONPATH"] = str(lab_server.root)  # the throwaway copy's course/, like the files
    port, token = free_port(), secrets.token_urlsafe(24)
    server = LabServer.start(
        [sys.executable, "-m", "course.classroom.lab", "--role", "instructor", "--week", "5",
         "--no-browser", *lab_args(port, token)], cwd=lab_server.root, env=env, port=port,
        token=token, log_path=artifacts / "instructor-lab.log")
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = LabPage(context.new_page(), server, artifacts / "test_instructor_lab")
    try:
        page.open(RELEASE)
        toasts = no_news(page.page)
        assert not any(NEWS in toast for toast in toasts), toasts
        menu = nbgrader_menu(page.page)
        assert {"Formgrader", "Course List", "Create assignment", "Assignment List"} <= set(
            menu), menu
        page.page.get_by_role("menuitem", name="Nbgrader", exact=True).click()
        page.shot("instructor-nbgrader-menu")
        page.page.keyboard.press("Escape")
        assert "Nbgrader Create Assignment" in right_sidebar_tabs(page.page)
        assert server.api("GET", "/formgraders") is not None  # the course list answers
        server.delete_sessions()
    finally:
        context.close()
        server.stop()
        write_timings(artifacts, "test_instructor_lab", page.timings)


def test_make_lab_week_5_serves_the_course_and_opens_week_5(browser, artifacts,
                                                             tmp_path: Path):
    expected = week_notebook(5, REPO)
    assert expected != first_notebook(REPO), "week 5 must not be the week make lab opens anyway"
    relative = expected.relative_to(REPO).as_posix()
    digest = hashlib.sha256(expected.read_bytes()).hexdigest()

    # make lab "opens a browser" through $BROWSER: a small program that writes down the URL.
    opened = tmp_path / "opened-url.txt"
    recorder = tmp_path / "record-url"
    recorder.write_text(f"#!{sys.executable}\nimport pathlib, sys\n"
                        f"pathlib.Path({str(opened)!r}).write_text(sys.argv[-1])\n")
    recorder.chmod(recorder.stat().st_mode | stat.S_IXUSR)
    env = isolated_env(tmp_path / "jupyter")
    env["BROWSER"] = str(recorder)
    port, token = free_port(), secrets.token_urlsafe(24)
    began = time.monotonic()
    server = LabServer.start(
        ["make", "--no-print-directory", "lab", "WEEK=5",
         f"LAB_ARGS={' '.join(lab_args(port, token))}"],
        cwd=REPO, env=env, port=port, token=token,
        log_path=artifacts / "make-lab.log", timeout=300)
    started = time.monotonic()
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    lab = LabPage(context.new_page(), server, artifacts / "test_make_lab")
    lab.timings.append(("server-started", started - began))
    try:
        log = server.log_tail(200)
        assert f"Opening {relative} in JupyterLab" in log, log
        listing = {item["name"] for item in server.api("GET", "/api/contents/")["content"]}
        assert {"course", "solutions", expected.parent.name} <= listing, listing

        deadline = time.monotonic() + 60
        while not opened.exists():
            assert time.monotonic() < deadline, f"make lab never opened a browser:\n{log}"
            time.sleep(0.2)
        lab.goto(opened.read_text().strip())
        lab.wait_notebook(expected.name, timeout_s=120)
        assert lab.page.url.startswith(server.url) and relative in lab.page.url, lab.page.url
        assert lab.panel.locator(".jp-Cell").count() > 3
        lab.shot("make-lab-opened-week-5")
        server.delete_sessions()
    finally:
        context.close()
        server.stop()
        write_timings(artifacts, "test_make_lab", lab.timings)
    assert hashlib.sha256(expected.read_bytes()).hexdigest() == digest, (
        f"make lab in the browser test changed {relative}")


def test_make_lab_no_browser_prints_an_address_that_opens_the_week(browser, artifacts,
                                                                   tmp_path: Path):
    """``make lab WEEK=2 LAB_ARGS='--no-browser ...'``: the address the server prints opens
    week 2's notebook, not the Launcher."""
    expected = week_notebook(2, REPO)
    relative = expected.relative_to(REPO).as_posix()
    digest = hashlib.sha256(expected.read_bytes()).hexdigest()
    env = isolated_env(tmp_path / "jupyter")
    port, token = free_port(), secrets.token_urlsafe(24)
    server = LabServer.start(
        ["make", "--no-print-directory", "lab", "WEEK=2",
         f"LAB_ARGS=--no-browser {' '.join(lab_args(port, token))}"],
        cwd=REPO, env=env, port=port, token=token,
        log_path=artifacts / "make-lab-no-browser.log", timeout=300)
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    lab = LabPage(context.new_page(), server, artifacts / "test_make_lab_no_browser")
    try:
        log = server.log_tail(200)
        printed = [word for line in log.splitlines() for word in line.split()
                   if word.startswith(f"http://127.0.0.1:{port}/")]
        assert printed, f"make lab --no-browser printed no address:\n{log}"
        url = printed[-1]
        assert f"/lab/tree/{relative}" in url, url
        # A token given on the command line is printed as "...", a generated one in full.
        lab.goto(url.replace("token=...", f"token={token}"))
        lab.wait_notebook(expected.name, timeout_s=120)
        assert relative in lab.page.url, lab.page.url
        assert lab.page.locator(".jp-Launcher").count() == 0, "the Launcher opened"
        lab.shot("make-lab-no-browser-opened-week-2")
        server.delete_sessions()
    finally:
        context.close()
        server.stop()
        write_timings(artifacts, "test_make_lab_no_browser", lab.timings)
    assert hashlib.sha256(expected.read_bytes()).hexdigest() == digest, (
        f"make lab in the browser test changed {relative}")


def test_a_freshly_opened_release_is_not_marked_modified(lab: LabPage):
    """Opening a week and starting its kernel changes nothing the learner did: the tab has
    no "modified" dot (JupyterLab marks it when the kernel's language_info differs from the
    notebook's)."""
    for week in sorted(int(p.name[4:]) for p in lab.server.root.glob("week[0-9]*")
                       if (p / f"{p.name}.ipynb").is_file()):
        path = f"week{week}/week{week}.ipynb"
        lab.open(path)
        lab.wait_idle(settle_s=1.5)
        tab = lab.page.locator(".jp-mod-current.lm-TabBar-tab").first
        classes = (tab.get_attribute("class") or "").split()
        if "jp-mod-dirty" in classes:
            lab.shot(f"week{week}-marked-modified", tab)
        assert "jp-mod-dirty" not in classes, f"{path} is marked modified on opening"


def exercise_1_cells(notebook: Path) -> tuple[int, int]:
    """(index of exercise 1's first answer cell, index of its last cell) among the code
    cells of ``notebook``, in the order the page shows them."""
    cells = nbformat.read(notebook, as_version=4).cells
    code, answer, last, in_exercise_1 = -1, None, None, False
    for cell in cells:
        if cell.cell_type == "markdown" and cell.source.lstrip().startswith("## "):
            in_exercise_1 = cell.source.lstrip().startswith("## Exercise 1 ")
            continue
        if cell.cell_type != "code":
            continue
        code += 1
        if in_exercise_1:
            last = code
            if answer is None and cell.metadata.get("nbgrader", {}).get("solution"):
                answer = code
    assert answer is not None and last is not None, f"{notebook} has no exercise 1 answer cell"
    return answer, last


@pytest.mark.parametrize("week", range(1, 8))
def test_run_all_on_a_release_runs_every_demo_down_to_exercise_1(lab: LabPage, week: int):
    """Run All on a fresh release runs every cell above exercise 1's answer cell without an
    error, and stops at exercise 1 (its answer cell or its test) with NotImplementedError,
    as the note at the notebook's top says; week 2's pⁿ sliders are on the page."""
    path = f"week{week}/week{week}.ipynb"
    need(lab, path)
    answer, last = exercise_1_cells(lab.server.root / path)
    top = nbformat.read(lab.server.root / path, as_version=4).cells[0].source
    assert "Run All" in top and "exercise 1" in top, f"{path} should say what Run All does"
    lab.open(path)
    lab.run_all()
    cells = lab.wait_run_finished(timeout_s=420)
    stopped = lab.first_error_cell(cells)
    lab.shot(f"week{week}-run-all")
    assert stopped is not None, f"Run All on {path} should stop at exercise 1"
    assert answer <= stopped.index <= last, (
        f"Run All on {path} stopped at code cell {stopped.index}, not at exercise 1 "
        f"(cells {answer}-{last}): {[o.text[:600] for o in stopped.outputs if o.is_error]}")
    assert "NotImplementedError" in " ".join(o.text for o in stopped.outputs if o.is_error)
    above = [c for c in cells if c.index < answer]
    assert above and all(c.executed for c in above), [
        (c.index, c.prompt) for c in above if not c.executed]
    assert not lab.error_outputs(above), [o.text[:600] for o in lab.error_outputs(above)]
    assert not any(c.executed for c in cells if c.index > stopped.index)
    if week == 2:
        sliders = lab.page.locator(".compounding-p, .compounding-n")
        assert sliders.count() == 2 and sliders.first.is_visible(), (
            "week 2's pⁿ sliders should appear on Run All")
        assert lab.page.locator(".compounding-plot img").first.is_visible()
        lab.shot("week2-sliders-on-run-all", lab.page.locator(".compounding-plot").first)
