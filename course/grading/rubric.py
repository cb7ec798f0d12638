"""Rubrics for written answers: kept for graders, never shown to students.

A week's rubric lives in ``rubrics/weekN.md`` (not in the source notebook, so
adding one never changes grading or the released notebook). It has one section per
written answer, headed by the answer cell's nbgrader grade id::

    ## reflection_1 (2 points)
    - 2: ...
    - 1: ...

:func:`read_rubric` parses it; :func:`missing_rubrics` names the written answers of a
source notebook that have no section. :func:`add_rubric_cells` puts each section as a
markdown cell right after its answer in an *autograded* notebook, which is what the
formgrader shows graders; the cells are marked (``metadata.course.rubric``) and
:class:`course.grading.feedback.HideHiddenTests` drops them from feedback. The student
edition (:mod:`course.grading.edition`) does not ship ``rubrics/``.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

import nbformat

SECTION = re.compile(r"^## +([A-Za-z0-9_-]+)[^\n]*\n(.*?)(?=^## |\Z)", re.M | re.S)


def rubric_path(repo: Path, week: int) -> Path:
    return Path(repo) / "rubrics" / f"week{week}.md"


def read_rubric(repo: Path, week: int) -> dict[str, str]:
    """``{grade_id: rubric text}`` from ``rubrics/weekN.md`` (empty if there is none)."""
    path = rubric_path(repo, week)
    if not path.is_file():
        return {}
    return {m.group(1): m.group(2).strip() for m in SECTION.finditer(path.read_text())}


def written_answers(notebook) -> dict[str, float]:
    """``{grade_id: points}`` of every manually graded answer cell."""
    return {c.metadata["nbgrader"]["grade_id"]: float(c.metadata["nbgrader"].get("points", 0))
            for c in notebook.cells
            if c.metadata.get("nbgrader", {}).get("grade")
            and c.metadata["nbgrader"].get("solution")}


def missing_rubrics(repo: Path, week: int) -> list[str]:
    """Written answers of ``solutions/weekN`` without a rubric section."""
    rubric = read_rubric(repo, week)
    missing = []
    for path in sorted((Path(repo) / "solutions" / f"week{week}").glob("*.ipynb")):
        missing += [g for g in written_answers(nbformat.read(path, as_version=4))
                    if g not in rubric]
    return missing


def is_rubric_cell(cell) -> bool:
    return bool(cell.get("metadata", {}).get("course", {}).get("rubric"))


def add_rubric_cells(notebook_path: Path, rubric: dict[str, str]) -> int:
    """Insert each rubric after its answer in ``notebook_path`` (once); how many were added.
    A read-only notebook (nbgrader's autograded copies are 0444) is written all the same,
    by its owner, and left with its mode: root never needed this, every other instructor
    did."""
    nb = nbformat.read(notebook_path, as_version=4)
    if any(is_rubric_cell(c) for c in nb.cells) or not rubric:
        return 0
    cells, added = [], 0
    for cell in nb.cells:
        cells.append(cell)
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in rubric and cell.metadata["nbgrader"].get("solution"):
            text = f"**Rubric for graders** (`{grade_id}`; students never see this cell)\n\n"
            note = nbformat.v4.new_markdown_cell(text + rubric[grade_id])
            note.metadata["course"] = {"rubric": True}
            cells.append(note)
            added += 1
    nb.cells = cells
    mode = stat.S_IMODE(os.stat(notebook_path).st_mode)
    if not mode & stat.S_IWUSR:  # nbgrader leaves autograded notebooks read-only (0444)
        os.chmod(notebook_path, mode | stat.S_IWUSR)
    try:
        nbformat.write(nb, notebook_path)
    finally:
        os.chmod(notebook_path, mode)
    return added
