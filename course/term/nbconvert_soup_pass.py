"""Feedback pages without nbconvert's BeautifulSoup pass: the same HTML, about twice as fast.

Works around: nbconvert's ``HTMLExporter.from_notebook_node`` renders the page and then
re-parses all of it with BeautifulSoup (added for accessibility in jupyter/nbconvert#2021)
only to give every ``<img>`` without an ``alt`` attribute a placeholder one and to make
JupyterLab-template cells focusable. A class's feedback is rendered once per student, so
the pass is paid once per student. :class:`FeedbackExporter`
(``GenerateFeedback.exporter_class``, ``nbgrader_config.py``) does, for nbgrader's
feedback template (built on the classic one, with no JupyterLab cells), what
``HTMLExporter.from_notebook_node`` does before its BeautifulSoup pass, then finds the
``<img>`` tags with the tokenizer BeautifulSoup's ``html.parser`` builder uses
(:class:`html.parser.HTMLParser`) and adds the same attribute in place
(:func:`with_alt_text`): the document is the same (``tests/test_grading_speedups.py``
parses both). Output that holds JupyterLab cells goes the exporter's own way.
Highlighted code is remembered per process (:class:`RememberedHighlight`, a public
filter subclass): a grading group renders the same cells once per student.

Private hooks it relies on, copied from ``HTMLExporter.from_notebook_node``: the
exporter's ``_init_resources(resources)`` method and its ``_nb_metadata`` attribute
(given to ``WidgetsDataTypeFilter``), and ``TemplateExporter.from_notebook_node`` called
past ``HTMLExporter``'s own. ``tests/test_upstream_term.py`` fails when the method it
copies changes.

Written against: nbconvert 7.17.2 (constraints.txt).
Upstream: no upstream issue about the cost of the pass; the hooks are private. The pass
came with https://github.com/jupyter/nbconvert/pull/2021
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from typing import ClassVar

from nbconvert.exporters import HTMLExporter
from nbconvert.exporters.templateexporter import TemplateExporter
from nbconvert.filters.highlight import Highlight2HTML
from nbconvert.filters.widgetsdatatypefilter import WidgetsDataTypeFilter

NO_ALT = "No description has been provided for this image"  # nbconvert's placeholder


class _ImagesWithoutAlt(HTMLParser):
    """Where each ``<img>`` start tag without an ``alt`` attribute begins (character offsets)."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=False)  # as BeautifulSoup's html.parser builder
        # getpos() counts lines by "\n" only: where each such line starts
        self.lines = [0] + [m.end() for m in re.finditer("\n", html)]
        self.found: list[int] = []
        self.feed(html)
        self.close()

    def handle_starttag(self, tag, attrs):
        if tag == "img" and not any(name == "alt" for name, _ in attrs):
            line, column = self.getpos()
            self.found.append(self.lines[line - 1] + column)

    handle_startendtag = handle_starttag


def with_alt_text(html: str) -> tuple[str, int]:
    """``html`` with ``alt="..."`` (nbconvert's placeholder) added to every ``<img>`` tag
    that has none, and how many there were."""
    if "<img" not in html.lower():
        return html, 0
    starts = _ImagesWithoutAlt(html).found
    pieces, last = [], 0
    for start in starts:
        end = start + len("<img")
        pieces += [html[last:end], f' alt="{NO_ALT}"']
        last = end
    return "".join(pieces) + html[last:], len(starts)


class RememberedHighlight(Highlight2HTML):
    """nbconvert's code highlighter, remembering what it returned: a class's notebooks
    share most of their code cells, and pygments gives the same HTML for the same source,
    language and formatter options (a cell's metadata matters only through
    ``magics_language``)."""

    _seen: ClassVar[dict[tuple, str]] = {}
    LIMIT: ClassVar[int] = 20_000  # cells remembered per process

    def __call__(self, source, language=None, metadata=None):
        key = (source, language or self.pygments_lexer,
               (metadata or {}).get("magics_language"),
               json.dumps(self.extra_formatter_options, sort_keys=True, default=repr))
        html = self._seen.get(key)
        if html is None:
            html = super().__call__(source, language, metadata)
            if len(self._seen) >= self.LIMIT:
                self._seen.clear()
            self._seen[key] = html
        return html


class FeedbackExporter(HTMLExporter):
    """nbconvert's HTMLExporter, without its BeautifulSoup pass when nothing needs it
    (module docstring)."""

    def from_notebook_node(self, nb, resources=None, **kw):
        if self.template_name.startswith("lab"):
            return super().from_notebook_node(nb, resources, **kw)
        # What HTMLExporter.from_notebook_node does before its BeautifulSoup pass.
        langinfo = nb.metadata.get("language_info", {})
        lexer = langinfo.get("pygments_lexer", langinfo.get("name", None))
        highlight_code = self.filters.get(
            "highlight_code", RememberedHighlight(pygments_lexer=lexer, parent=self))
        resources = self._init_resources(resources)
        filter_data_type = WidgetsDataTypeFilter(
            notebook_metadata=self._nb_metadata, parent=self, resources=resources)
        self.register_filter("highlight_code", highlight_code)
        self.register_filter("filter_data_type", filter_data_type)
        html, resources = TemplateExporter.from_notebook_node(self, nb, resources, **kw)
        if "jp-Notebook" in html:  # JupyterLab cells after all: the exporter's own pass
            from bs4 import BeautifulSoup

            soup = BeautifulSoup(html, features="html.parser")
            for selector in (".jp-Notebook div.jp-Cell-inputWrapper",
                             ".jp-Notebook div.jp-OutputArea-output"):
                for element in soup.select(selector):
                    element.attrs["tabindex"] = "0"
            html = str(soup)
        html, missing = with_alt_text(html)
        if missing:
            self.log.warning("Alternative text is missing on %s image(s).", missing)
        return html, resources
