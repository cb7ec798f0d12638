"""A notebook's cells read as plain JSON, and the markers nbgrader and the release put in them.

It promises:

- :func:`cells_of` reads a notebook without nbformat's schema validation (~30 ms a
  notebook saved: ``make test`` reads every week's) and :func:`points_of` gives each graded
  cell's points from nbgrader's metadata;
- :data:`HIDDEN` / :data:`HIDDEN_END` / :data:`HIDDEN_BLOCK` are nbgrader's hidden-test
  block markers, :data:`BLANK` an answer cell as the release leaves it;
- it imports nothing heavy (the grader's test guard, ``make test``, nbgrader's restore
  preprocessor and the term's feedback import it).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HIDDEN = "### BEGIN " + "HIDDEN TESTS"  # in two parts: the student edition ships this file
HIDDEN_END = "### END " + "HIDDEN TESTS"
HIDDEN_BLOCK = re.compile(re.escape(HIDDEN) + r".*?(?:" + re.escape(HIDDEN_END) + r"|\Z)", re.S)
"""A hidden-test block, to its end marker (or the end of the cell when it has none)."""
# An answer cell as the release leaves it, not yet attempted
BLANK = re.compile(r"#\s*YOUR CODE HERE\s*\n\s*raise NotImplementedError\(\)")


@dataclass(frozen=True)
class Cell:
    """A notebook cell as this module reads it: the type, the source, nbgrader's metadata."""

    cell_type: str
    source: str
    nbgrader: dict[str, Any]


def cells_of(notebook: Path) -> list[Cell]:
    """The cells of ``notebook``, read as plain JSON: no schema validation (nbformat's
    costs ~30 ms a notebook, and ``make test`` reads every week's). Raises ``ValueError``
    (``json.JSONDecodeError``) or ``KeyError`` for a file that is not a notebook."""
    found = []
    for cell in json.loads(notebook.read_text())["cells"]:
        source = cell.get("source", "")
        found.append(Cell(cell.get("cell_type", ""), "".join(source) if isinstance(source, list)
                          else source, cell.get("metadata", {}).get("nbgrader", {})))
    return found


def points_of(notebook: Path) -> dict[str, float]:
    """``{grade id: points}`` of every graded cell, from nbgrader's metadata."""
    return {c.nbgrader["grade_id"]: float(c.nbgrader.get("points", 0))
            for c in cells_of(notebook) if c.nbgrader.get("grade")}
