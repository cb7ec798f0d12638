"""The site's pages, as the files Sphinx reads: one notebook per week, the home page, the
instructors' guide.

A week's page (:func:`week_page`) is the RELEASE's notebook, cell by cell, with outputs
from the executed SOLUTION's run, matched by cell id:

- a lesson or demo cell (the same source in both) shows the solution run's outputs;
- an answer cell shows the release's stub (``# YOUR CODE HERE``) and no output;
- a test cell shows the release's source (the visible tests only) and, when the cell
  has no hidden part (the same source in both), the solution run's output; a cell with
  hidden tests shows no output (what it printed came from the hidden part too);
- hidden tests and solutions are never shown: they are not in the release's sources, and
  an output that would show one line of them is dropped (:mod:`website.leaks`);
- a widget shows the static picture made in the kernel (:mod:`website.widget_pictures`).

A box at the top of each page says how to run it: the two commands and the notebook's path.
"""

from __future__ import annotations

import copy
import re

import nbformat

from website.execute import WIDGET_VIEW

RUN_IT = """```{{admonition}} Run this week yourself
:class: tip
This page is week {n}'s notebook as a learner gets it, with the outputs of a real run of
the lesson (the exercises are left for you). Clone the course, then:

    make lab WEEK={n}     # sets everything up, opens week{n}/week{n}.ipynb in JupyterLab
    make test WEEK={n}    # checks your answers, test by test

The notebook is `week{n}/week{n}.ipynb`. [How to start](index.md#how-to-start)
```"""


def week_page(number: int, release: nbformat.NotebookNode, executed: nbformat.NotebookNode,
              answer_ids: set[str], leaks_in) -> tuple[nbformat.NotebookNode, list[str]]:
    """``(the page's notebook, notes on what was left out)``. ``leaks_in(text)`` lists
    what a text would leak (:meth:`website.leaks.Secrets.found_in`)."""
    page = copy.deepcopy(release)
    ran = {cell.get("id"): cell for cell in executed.cells}
    notes = []
    for cell in page.cells:
        if cell.cell_type != "code":
            continue
        cell.outputs, cell.execution_count = [], None
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id", "")
        twin = ran.get(cell.get("id"))
        if twin is None or grade_id in answer_ids or twin.source.strip() != cell.source.strip():
            continue
        for output in twin.get("outputs", []):
            output = _shown(output)
            if output is None:
                continue
            leaked = leaks_in(_output_text(output))
            if leaked:
                notes.append(f"week {number}, cell {grade_id or cell.get('id')}: an output "
                             f"left out, it would show {leaked[0]}")
                continue
            cell.outputs.append(output)
        cell.execution_count = twin.get("execution_count")
    page.metadata.pop("widgets", None)
    page.metadata["language_info"] = executed.metadata.get("language_info",
                                                           {"name": "python"})
    for cell in page.cells[1:]:  # one title per page: a later "# Graded exercises" would
        if cell.cell_type == "markdown":  # be a page of its own in the sidebar
            cell.source = _demote_titles(cell.source)
    box = nbformat.v4.new_markdown_cell(RUN_IT.format(n=number))
    box["id"] = f"site-run-week{number}"  # fixed: the same page is the same file
    page.cells.insert(1 if page.cells and page.cells[0].source.startswith("# ") else 0, box)
    return page, notes


def _demote_titles(markdown: str) -> str:
    """``# Title`` lines become ``## Title``, outside fenced code."""
    lines, fenced = [], False
    for line in markdown.split("\n"):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        lines.append("#" + line if not fenced and line.startswith("# ") else line)
    return "\n".join(lines)


def _shown(output: nbformat.NotebookNode) -> nbformat.NotebookNode | None:
    """The output as the page shows it: a widget as its picture only; errors never."""
    if output.get("output_type") == "error":
        return None
    output = copy.deepcopy(output)
    data = output.get("data")
    if data is not None and WIDGET_VIEW in data:
        data.pop(WIDGET_VIEW)
        data.pop("text/plain", None)  # "VBox(children=...)": the picture says it better
    return output


def _output_text(output: nbformat.NotebookNode) -> str:
    if output.get("output_type") == "stream":
        return output.get("text", "")
    data = output.get("data", {})
    return "\n".join(str(v) for k, v in data.items() if k.startswith("text/"))


# ------------------------------------------------------------------ home and instructors
def readme_section(readme: str, title: str) -> str:
    """The body of the README's ``## title`` section."""
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", readme, re.S | re.M)
    return match.group(1).strip() if match else ""


def site_links(markdown: str) -> str:
    """Relative links to files of the repository: a week's notebook becomes its page, the
    instructors' guide its page, the README the home page; anything else (a file the site
    does not hold) becomes its path in code, to open in the clone."""
    def swap(match: re.Match) -> str:
        text, target = match.group(1), match.group(2)
        if re.match(r"[a-z]+:|#", target):
            return match.group(0)
        path = target.split("#")[0]
        week = re.search(r"week(\d+)/week\1\.ipynb$", path)
        if week:
            return f"[{text}](week{week.group(1)}.ipynb)"
        if path.endswith("instructors.md"):
            return f"[{text}](instructors.md)"
        if path.endswith("README.md"):
            return f"[{text}](index.md)"
        shown = path.lstrip("./")
        return text if text.strip("`") == shown else f"{text} (`{shown}`)"
    return re.sub(r"(?<!!)\[([^\]]+)\]\(([^)\s]+)\)", swap, markdown)


def weeks_table(table: str) -> str:
    """The README's table of weeks for the site: each title links its week's page, the
    notebook column names the notebook to open."""
    rows = []
    for row in table.splitlines():
        match = re.match(r"\| (\d+) \| (.*?) \| ", row)
        if match:
            number, title = match.groups()
            row = row.replace(f"| {number} | {title} |",
                              f"| {number} | [{title}](week{number}.ipynb) |", 1)
            row = re.sub(r"\[(`[^`]+`)\]\([^)]+\)", r"\1", row)
        rows.append(row)
    return "\n".join(rows)


def home_page(readme: str, table: str, numbers: list[int]) -> str:
    intro = readme.split("\n## ", 1)[0].split("\n", 1)[1].strip()
    toctree = "\n".join([*(f"week{n}" for n in numbers), "instructors"])
    return f"""# Crash, Resume, Don't Charge Twice

{site_links(intro)}

## Who it is for

{site_links(readme_section(readme, "Who it is for"))}

## The weeks

Each week's page is its notebook as a learner gets it, shown with the outputs of a real
run of the lesson: the ledgers, timelines and plots. The exercises are left blank, as in
the notebook you will solve (`# YOUR CODE HERE`) with their visible tests.

{weeks_table(table)}

## How to start

You need Python 3.11 or newer and `make`. Clone the course, then:

```bash
make lab     # sets everything up, then opens week 1 in JupyterLab: work here
make test    # sets everything up, then checks your work, test by test
```

`make lab WEEK=5` opens week 5 (`week5/week5.ipynb`); `make test WEEK=5` checks only week
5. The first run creates `.venv/` from the pinned dependencies (a few minutes on a home
connection); everything runs offline after that, with no API key. The README says more:
`make check`, the written answers and their rubrics, the crash lab.

Instructors: [the instructors' guide](instructors.md) (nbgrader, grading a class, a
JupyterHub).

```{{toctree}}
:hidden:
:maxdepth: 1

{toctree}
```
"""


def instructors_page(guide: str) -> str:
    first, _, rest = guide.partition("\n")
    box = """
```{admonition} Run it
:class: tip
The course runs from a clone: `make lab` opens the learner's JupyterLab, `make test`
checks the learner's notebooks (`weekN/weekN.ipynb`), and `make lab ROLE=instructor`
adds nbgrader's instructor tools. [How to start](index.md#how-to-start)
```
"""
    return f"{first}\n{box}\n{site_links(rest)}"
