"""The leak search over the built site: no solution, no hidden test, no rubric, no secret.

It is the student edition's search (:func:`course.term.edition.leaks`: nbgrader's
solution and hidden-test markers, every whole solution block, each week's declared
secrets) run over the site's text, plus what a web page could leak that a released
notebook cannot:

- **lines**: any single line (30 characters or more, whitespace squashed) of a solution
  block, of a hidden test, or of a rubric (``rubrics/weekN.md``) that appears nowhere in
  what learners already get (the released notebooks, the ``course`` package, the README,
  ``docs/``). A whole
  block is caught by the edition's search; a page could show one line of it, in an
  output or a traceback;
- **hidden test blocks** as whole blocks, like the solutions.

A week's declared secrets are searched in its own page (as the edition searches a week's
folder), every week's in the home page and the instructors' guide, none in the search
index (made of every page's words: a week-5 secret may be a later week's lesson).

HTML is read as text (tags dropped, entities decoded: a highlighted code line is split in
``<span>``\\ s and ``&quot;``), and every other text file of the site (the search index,
``.txt`` and ``.js`` files) as it is. :func:`text_leaks` is also what the page builder
uses to drop a single output that would leak before the site is even built.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

import nbformat

HIDDEN = ("### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS")
MIN_LINE = 30
PAGES = ("index", "instructors")  # searched for every week's secrets


def squash(text: str) -> str:
    return "\n".join(" ".join(line.split()) for line in text.splitlines() if line.strip())


@dataclass(frozen=True)
class Secrets:
    markers: tuple[str, ...]
    blocks: tuple[str, ...]  # whole blocks, squashed (two lines or more)
    lines: tuple[str, ...]  # single squashed lines no public text holds
    by_week: dict[str, tuple[str, ...]]  # "week5": its declared secrets

    def found_in(self, text: str, week: str | None) -> list[str]:
        """What of this leaks in ``text``: a page of week ``week`` (its declared secrets are
        searched), or None (every week's), or "" (none: the search index and the other
        files made from all pages, where each week's words are those of every page)."""
        squashed = squash(text)
        found = [f"the marker {m!r}" for m in self.markers if m in text]
        weeks = [week] if week else (list(self.by_week) if week is None else [])
        found += [f"the {w} secret {s!r}" for w in weeks for s in self.by_week.get(w, ())
                  if s in text]
        found += [f"a block starting {b.splitlines()[0][:60]!r}" for b in self.blocks
                  if b in squashed]
        found += [f"the line {line[:70]!r}" for line in self.lines if line in squashed]
        return found


def secrets(repo: Path) -> Secrets:
    """Everything the site must not show, read from ``repo``'s solutions and rubrics."""
    from course.term.edition import MARKERS, solution_blocks, week_secrets

    blocks = [b for b in solution_blocks(repo)]
    hidden = []
    for path in sorted((repo / "solutions").glob("week*/week*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            hidden += re.findall(f"{HIDDEN[0]}\n(.*?){HIDDEN[1]}", cell.source, re.S)
    hidden = [squash(h) for h in hidden]
    blocks += [h for h in hidden if len(h.splitlines()) >= 2]
    rubric_lines = []
    for path in sorted((repo / "rubrics").glob("*.md")):
        rubric_lines += squash(path.read_text()).splitlines()
    public = squash("\n".join(_public_texts(repo)))
    candidates = {line for block in [*blocks, *hidden] for line in block.splitlines()}
    candidates |= set(rubric_lines)
    lines = sorted(line for line in candidates if len(line) >= MIN_LINE and line not in public)
    return Secrets(tuple(MARKERS) + HIDDEN, tuple(blocks), tuple(lines), week_secrets(repo))


def _public_texts(repo: Path) -> list[str]:
    texts = [(repo / "README.md").read_text()]
    texts += [p.read_text() for p in sorted((repo / "docs").glob("*.md"))]
    for path in sorted(repo.glob("week*/week*.ipynb")):
        texts += [c.source for c in nbformat.read(path, as_version=4).cells]
    texts += [p.read_text() for p in sorted((repo / "course").rglob("*.py"))]
    return texts


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style"):
            self._skip += 1
        elif tag in ("br", "p", "div", "tr", "li", "pre", "h1", "h2", "h3", "h4", "table"):
            self.parts.append("\n")
        for name, value in attrs:  # alt and title texts are shown too
            if name in ("alt", "title", "value") and value:
                self.parts.append(f" {value} ")

    def handle_endtag(self, tag):
        if tag in ("script", "style"):
            self._skip = max(0, self._skip - 1)

    def handle_data(self, data):
        if not self._skip:
            self.parts.append(data)


def html_text(page: str) -> str:
    parser = _Text()
    parser.feed(page)
    parser.close()
    return "".join(parser.parts)


def site_leaks(site: Path, repo: Path) -> list[str]:
    """``file: what`` for every leak found in the built ``site`` (empty: none)."""
    found_secrets = secrets(repo)
    found = []
    for path in sorted(site.rglob("*")):
        if not path.is_file() or path.suffix in (".png", ".jpg", ".gif", ".woff", ".woff2",
                                                 ".ico", ".pickle", ".doctree"):
            continue
        try:
            raw = path.read_text()
        except UnicodeDecodeError:
            continue
        name = str(path.relative_to(site))
        week = re.fullmatch(r"week\d+", path.stem)
        scope = path.stem if week else (None if path.stem in PAGES else "")
        texts = [raw, html_text(raw), html.unescape(raw)] if path.suffix == ".html" else [raw]
        seen = set()
        for text in texts:
            for what in found_secrets.found_in(text, scope):
                if what not in seen:
                    seen.add(what)
                    found.append(f"{name}: {what}")
    return found
