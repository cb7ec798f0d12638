"""A submission's graded cells made to match the release before nbgrader reads them.

nbgrader 0.9's ``autograde`` stops (for every notebook of the run, so for a whole
worker group of ``make grade``) on three accidents a student can make in JupyterLab:

- a graded cell duplicated (copy and paste): its ``DeduplicateIds`` empties the
  metadata of the extra copies, and ``add_missing_cells`` then fails on the empty
  metadata (``KeyError: 'grade_id'``);
- a graded cell the release does not have (a cell's metadata copied onto a new one,
  another id typed in the cell toolbar): ``add_missing_cells`` fails the same way;
- a cell whose type or nbgrader flags were changed (a test cell marked as an answer):
  ``OverwriteCells`` raises "Inconsistent checksums".

:func:`conform` gives each the treatment nbgrader's own tools intend, before nbgrader
sees the notebook: of duplicated cells, the last copy keeps the grade id (what
``DeduplicateIds`` keeps) and the others become ordinary cells; a graded cell the
release does not have becomes an ordinary cell; a known cell's type and flags are put
back as released (what ``OverwriteCells`` does to locked cells). Each accident is said
in one line, in the grader's own words: only grade ids of the release are named.
"""

from __future__ import annotations

import nbformat
from nbformat import NotebookNode

FLAGS = ("grade", "solution", "locked", "task", "grade_id", "points", "schema_version")


def released_cells(source: NotebookNode) -> dict[str, tuple[str, dict]]:
    """grade id → (cell type, nbgrader metadata) of every graded cell of the source."""
    cells = {}
    for cell in source.cells:
        meta = cell.get("metadata", {}).get("nbgrader")
        if meta and meta.get("grade_id"):
            cells[meta["grade_id"]] = (cell.cell_type, {k: meta[k] for k in FLAGS if k in meta})
    return cells


def _meta(cell) -> dict | None:
    meta = cell.get("metadata", {}).get("nbgrader")
    return meta if isinstance(meta, dict) else ({} if meta is not None else None)


def conform(nb: NotebookNode, source: NotebookNode) -> list[str]:
    """Make ``nb``'s graded cells match ``source``'s (module docstring), in place; one
    line per kind of accident found (empty when there was none)."""
    expected = released_cells(source)
    said: dict[str, None] = {}
    last: dict[str, int] = {}
    for i, cell in enumerate(nb.cells):
        meta = _meta(cell)
        grade_id = meta.get("grade_id") if meta else None
        if isinstance(grade_id, str) and grade_id in expected:
            last[grade_id] = i
    duplicated: dict[str, None] = {}
    unknown = 0
    changed: dict[str, None] = {}
    for i, cell in enumerate(nb.cells):
        meta = _meta(cell)
        if meta is None:
            continue
        grade_id = meta.get("grade_id")
        if not isinstance(grade_id, str) or grade_id not in expected:
            cell.metadata.pop("nbgrader", None)
            unknown += bool(meta)
            continue
        if last[grade_id] != i:
            cell.metadata.pop("nbgrader", None)
            duplicated[grade_id] = None
            continue
        kind, flags = expected[grade_id]
        if cell.cell_type != kind or {k: meta.get(k) for k in flags} != flags:
            nb.cells[i] = _as_released(cell, kind, flags)
            changed[grade_id] = None
    if duplicated:
        said["duplicated graded cell(s) " + ", ".join(duplicated) + ": the last copy was "
             "graded, the others ran as ordinary cells"] = None
    if unknown:
        said[f"{unknown} graded cell(s) the release does not have: run as ordinary cells, "
             "no points"] = None
    if changed:
        said["cell type or grading metadata changed in " + ", ".join(changed) + ": put back "
             "as released"] = None
    return list(said)


def _as_released(cell, kind: str, flags: dict) -> NotebookNode:
    """``cell`` with the released type and nbgrader flags (its source kept)."""
    metadata = {k: v for k, v in cell.get("metadata", {}).items() if k != "nbgrader"}
    metadata["nbgrader"] = dict(flags)
    make = nbformat.v4.new_code_cell if kind == "code" else (
        nbformat.v4.new_markdown_cell if kind == "markdown" else nbformat.v4.new_raw_cell)
    fresh = make(source=cell.get("source", ""), metadata=metadata)
    if "id" in cell:
        fresh["id"] = cell["id"]
    return fresh
