"""Sphinx's configuration for the course's site (copied into the build's source folder by
``python -m website.build``; ``make site``).

Sphinx with MyST-NB, because both are pure Python, pinned in ``constraints.txt`` like the
rest of the course, and build offline: the notebooks are executed by the site builder
(``nb_execution_mode = "off"`` here: MyST-NB renders the outputs it is given), the theme
(Furo) ships its own CSS and JavaScript, and no page loads anything from a CDN (widgets are
pictures, ``nb_ipywidgets_js`` is empty; no page has maths, so MathJax is never added).
"""

project = "Crash, Resume, Don't Charge Twice"
author = "the course's authors"
copyright = "the course's authors"
extensions = ["myst_nb"]
exclude_patterns = ["_build", "**.ipynb_checkpoints"]

nb_execution_mode = "off"  # outputs come from website/execute.py, run once per change
nb_ipywidgets_js = {}  # no widget manager from a CDN: widgets are static pictures
nb_merge_streams = True
myst_heading_anchors = 3
suppress_warnings = ["myst.header"]  # a notebook's headings may skip a level

html_theme = "furo"
html_title = "Crash, Resume, Don't Charge Twice"
html_static_path = ["_static"]
html_css_files = ["site.css"]
html_favicon = "_static/favicon.svg"  # else the browser asks for /favicon.ico: a 404
html_copy_source = False  # the pages' notebooks are not offered for download
html_show_sourcelink = False
html_last_updated_fmt = None
