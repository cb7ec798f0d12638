"""The site builder's pieces (``website/``), fast: which outputs a week's page keeps, the
leak search over HTML, the links. The whole build in Chromium is tests/browser/test_site.py."""

from __future__ import annotations

import html
import re
import sys
from pathlib import Path

import nbformat
import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # the builder is a folder of the repository, not the package

from website.execute import WIDGET_VIEW, add_pictures  # noqa: E402
from website.leaks import secrets, site_leaks  # noqa: E402
from website.pages import site_links, week_page, weeks_table  # noqa: E402


def _code(source: str, cell_id: str, grade_id: str | None = None, outputs=()):
    cell = nbformat.v4.new_code_cell(source)
    cell["id"] = cell_id
    if grade_id:
        cell.metadata["nbgrader"] = {"grade_id": grade_id}
    cell.outputs = [nbformat.from_dict(o) for o in outputs]
    return cell


def _stream(text: str) -> dict:
    return {"output_type": "stream", "name": "stdout", "text": text}


def test_a_page_keeps_lesson_outputs_and_never_an_answers_or_a_hidden_tests():
    title = nbformat.v4.new_markdown_cell("# Week 9 — a test\n\nwords")
    title["id"] = "title"
    release = nbformat.v4.new_notebook(cells=[
        title,
        _code("print('lesson')", "lesson"),
        _code("# YOUR CODE HERE\nraise NotImplementedError()", "answer", "ex1_answer"),
        _code("assert f() == 1", "visible", "ex1_visible"),
        _code("assert g() == 2", "hidden", "ex1_hidden"),
        _code("show()", "leaky"),
        _code("panel", "widget"),
    ])
    executed = nbformat.v4.new_notebook(cells=[
        title,
        _code("print('lesson')", "lesson", outputs=[_stream("lesson\n")]),
        _code("def f():\n    return 1", "answer", "ex1_answer", [_stream("answer ran\n")]),
        _code("assert f() == 1", "visible", "ex1_visible", [_stream("visible passed\n")]),
        _code("assert g() == 2\n### BEGIN HIDDEN TESTS\nassert g(3)\n### END HIDDEN TESTS",
              "hidden", "ex1_hidden", [_stream("hidden passed\n")]),
        _code("show()", "leaky", outputs=[_stream("the answer is 42\n")]),
        _code("panel", "widget", outputs=[{"output_type": "display_data", "metadata": {}, "data": {
            "text/plain": "VBox(...)", WIDGET_VIEW: {"model_id": "m1", "version_major": 2,
                                                     "version_minor": 0}}}]),
    ])
    add_pictures(executed, {"m1": '<img src="data:image/png;base64,AA==">'})

    page, notes = week_page(9, release, executed, {"ex1_answer"},
                            lambda text: ["a secret"] if "42" in text else [])

    shown = {c.get("id"): "".join(o.get("text", "") + str(o.get("data", ""))
                                  for o in c.get("outputs", []))
             for c in page.cells if c.cell_type == "code"}
    assert shown["lesson"] == "lesson\n"
    assert shown["answer"] == "" and "NotImplementedError" in page.cells[3].source
    assert shown["visible"] == "visible passed\n"
    assert shown["hidden"] == "", "a test cell with hidden tests shows no output"
    assert shown["leaky"] == "" and len(notes) == 1 and "a secret" in notes[0]
    widget = next(c for c in page.cells if c.get("id") == "widget").outputs[0]["data"]
    assert set(widget) == {"text/html"} and "data:image/png" in widget["text/html"]
    box = page.cells[1]
    assert box.cell_type == "markdown" and "make lab WEEK=9" in box.source
    assert "week9/week9.ipynb" in box.source and "make test WEEK=9" in box.source
    assert all("BEGIN HIDDEN" not in c.source for c in page.cells)


@pytest.fixture(scope="module")
def found():
    return secrets(REPO)


def _page(tmp_path: Path, name: str, code: str) -> Path:
    """A built page showing ``code`` as Pygments would: escaped, one span per token."""
    spans = "".join(f'<span class="n">{html.escape(token)}</span>'
                    for token in re.split(r"(\W)", code) if token)
    site = tmp_path / "site"
    site.mkdir(exist_ok=True)
    (site / name).write_text(f"<html><body><div class='highlight'><pre>{spans}</pre></div>"
                             "</body></html>")
    return site


def test_the_leak_search_finds_a_hidden_test_line_in_highlighted_html(tmp_path, found):
    assert found.lines, "the solutions have hidden tests and solutions: lines to search for"
    line = next(line for line in found.lines if '"' in line or "'" in line or "<" in line)
    site = _page(tmp_path, "week5.html", f"x = 1\n    {line}\ny = 2\n")
    leaks = site_leaks(site, REPO)
    assert leaks and leaks[0].startswith("week5.html: ")


def test_the_leak_search_finds_markers_and_a_weeks_secret_but_not_in_a_clean_page(
        tmp_path, found):
    week, [secret, *_] = next((w, s) for w, s in found.by_week.items() if s)
    assert site_leaks(_page(tmp_path, f"{week}.html", "print('hello')\n"), REPO) == []
    site = _page(tmp_path, f"{week}.html", f"value = {secret}\n")
    assert any("secret" in leak for leak in site_leaks(site, REPO))
    site = _page(tmp_path, "index.html", "### BEGIN " + "SOLUTION\n")
    assert any("marker" in leak for leak in site_leaks(site, REPO))


def test_the_built_sites_links_point_at_its_pages():
    assert site_links("[week 5](week5/week5.ipynb)") == "[week 5](week5.ipynb)"
    assert site_links("[the guide](docs/instructors.md)") == "[the guide](instructors.md)"
    assert site_links("see [`scripts/lock.py`](scripts/lock.py)") == "see `scripts/lock.py`"
    assert site_links("[Z2JH](https://z2jh.jupyter.org)") == "[Z2JH](https://z2jh.jupyter.org)"
    table = weeks_table("| 5 | **Crash** | keys | [`week5/week5.ipynb`](week5/week5.ipynb) (5) |")
    assert table == "| 5 | [**Crash**](week5.ipynb) | keys | `week5/week5.ipynb` (5) |"


def test_make_help_names_make_site():
    makefile = (REPO / "Makefile").read_text()
    assert re.search(r"^site: setup site-deps", makefile, re.M)
    assert "make site" in makefile.split("\nsetup:", 1)[0]
