"""Rubrics for written answers: kept for graders, never shown to students.

A week's rubric lives in ``rubrics/weekN.md`` (not in the source notebook, so
adding one never changes grading or the released notebook). It has one section per
written answer, headed by the answer cell's nbgrader grade id::

    ## reflection_1 (2 points)
    - 2: ...
    - 1: ...

:func:`read_rubric` parses it; :func:`missing_rubrics` names the written answers of a
source notebook that have no section. :class:`AddRubric`, an autograde step of
``nbgrader_config.py`` (so ``make grade`` and the hub's formgrader both run it), puts each
section as a markdown cell right after its answer in the *autograded* notebook, which is
what the formgrader shows graders; the cells are marked (``metadata.course.rubric``) and
:class:`course.term.feedback.HideHiddenTests` drops them from feedback. The student
edition (:mod:`course.term.edition`) does not ship ``rubrics/``.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
from nbconvert.preprocessors import Preprocessor
from traitlets import Bool, Unicode

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


def with_rubric_cells(cells: list, rubric: dict[str, str]) -> tuple[list, int]:
    """``cells`` with each rubric after its answer (none added twice); how many were added."""
    if any(is_rubric_cell(c) for c in cells) or not rubric:
        return cells, 0
    out, added = [], 0
    for cell in cells:
        out.append(cell)
        grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if grade_id in rubric and cell.metadata["nbgrader"].get("solution"):
            text = f"**Rubric for graders** (`{grade_id}`; students never see this cell)\n\n"
            note = nbformat.v4.new_markdown_cell(text + rubric[grade_id])
            note.metadata["course"] = {"rubric": True}
            out.append(note)
            added += 1
    return out, added


class AddRubric(Preprocessor):
    """nbgrader's autograde step that puts the rubric under each written answer of the
    autograded notebook (``Autograde.autograde_preprocessors``, ``nbgrader_config.py``),
    for ``make grade`` and for the formgrader alike: one grading path, wherever grading
    starts. ``course_root`` is the folder with ``rubrics/`` (the clone the configuration
    comes from); the week is the assignment's name (``week5``)."""

    enabled = Bool(True)
    course_root = Unicode("", help="the course folder holding rubrics/").tag(config=True)

    def preprocess(self, nb, resources):
        assignment = (resources or {}).get("nbgrader", {}).get("assignment", "")
        week = re.fullmatch(r"week(\d+)", assignment or "")
        if week and self.course_root:
            nb.cells, _ = with_rubric_cells(nb.cells, read_rubric(Path(self.course_root),
                                                                  int(week[1])))
        return nb, resources
