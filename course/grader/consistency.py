"""Where a week's declaration and its notebook disagree.

It promises:

- :func:`problems`: every graded cell accounted for exactly once and in the notebook's
  order, each exercise under a heading ``Exercise N — <title>``, numbered 1, 2, ... with
  visible tests before hidden ones, hidden tests holding nbgrader's hidden block and
  visible ones not, points adding up; one line per disagreement, empty when none;
- :func:`reference_problems`: every declared reference (``module.function`` an answer must
  not call) is a function in ``course/``; apart, as it imports the modules;
- the notebook is read as plain JSON (:func:`course.grader.cells.cells_of`).
"""

from __future__ import annotations

import re
from itertools import pairwise

from course.grader.cells import HIDDEN, cells_of
from course.grader.week import Week


def problems(week: Week) -> list[str]:
    """Where ``week``'s declaration and its notebook disagree (empty: nowhere)."""
    if not week.notebook.is_file():
        return [f"there is no {week.notebook.name}"]
    notebook_cells = cells_of(week.notebook)
    found: list[str] = []
    headings = [t for c in notebook_cells if c.cell_type == "markdown"
                for t in re.findall(r"^#{1,3} +(.+)$", c.source, re.M)]
    if not headings or headings[0].strip() != f"Week {week.number} — {week.title}":
        found.append(f"its first heading is not 'Week {week.number} — {week.title}'")
    graded, code = [], {}
    for cell in notebook_cells:
        meta = cell.nbgrader
        if meta.get("grade") or meta.get("solution"):
            graded.append(meta.get("grade_id"))
            code[meta.get("grade_id")] = (cell, meta)
    expected = []
    for number, exercise in enumerate(week.exercises, 1):
        if exercise.number != number:
            found.append(f"exercise {exercise.number} is declared where {number} is due")
        if not any(h.startswith(exercise.label) for h in headings):
            found.append(f"no heading '{exercise.label}'")
        expected += [*exercise.answers, *exercise.tests]
        expected += [w.id for w in week.written if w.exercise == number]
        points = sum(float(code[g][1].get("points", 0)) for g in exercise.tests if g in code)
        if points != exercise.points:
            found.append(f"exercise {number}'s tests are worth {points:g}, not "
                         f"{exercise.points:g}")
        found += [f"{g}: a hidden test without {HIDDEN!r}" for g in exercise.hidden
                  if g in code and HIDDEN not in code[g][0].source]
        found += [f"{g}: a visible test holding hidden tests" for g in exercise.visible
                  if g in code and HIDDEN in code[g][0].source]
        found += [f"{g}: not an answer cell" for g in exercise.answers
                  if g in code and (code[g][1].get("grade") or code[g][0].cell_type != "code")]
        found += [f"{g}: not a test cell" for g in exercise.tests
                  if g in code and (code[g][1].get("solution") or code[g][0].cell_type != "code")]
    expected += [w.id for w in week.written if w.exercise is None]
    found += _order_problems(week, graded, expected)
    for answer in week.written:
        cell, meta = code.get(answer.id, (None, {}))
        if cell is not None and (cell.cell_type != "markdown" or not meta.get("grade")
                                 or float(meta.get("points", 0)) != answer.points):
            found.append(f"{answer.id}: not a markdown answer worth {answer.points:g}")
    return found


def reference_problems(week: Week) -> list[str]:
    """Every declared reference that is not a function in ``course/`` (empty: none). Apart
    from :func:`problems`: it imports the modules, which grading need not pay for."""
    return [f"exercise {e.number}: {ref} is no function in course/" for e in week.exercises
            for ref in e.references if not _importable(ref)]


def _order_problems(week: Week, graded: list[str], expected: list[str]) -> list[str]:
    """The notebook's graded and answer cells against the declared ones: the same cells,
    each exercise's together and in order (an answer first), reflections after them."""
    missing = [g for g in expected if g not in graded]
    extra = [g for g in graded if g not in expected]
    if missing or extra or len(set(graded)) != len(graded):
        return [f"cells declared but not in the notebook: {missing}; in the notebook but not "
                f"declared: {extra}" if missing or extra else "a grade id is used twice"]
    place = {g: e.number for e in week.exercises for g in (*e.answers, *e.tests)}
    place.update({w.id: w.exercise or len(week.exercises) + 1 for w in week.written})
    for before, after in pairwise(graded):
        if place[after] < place[before]:
            return [f"{after} (exercise {place[after]}) comes after {before} "
                    f"(exercise {place[before]}) in the notebook"]
    return [f"exercise {e.number}: a test comes before its first answer cell"
            for e in week.exercises
            if e.answers and min(graded.index(g) for g in e.tests)
            < min(graded.index(g) for g in e.answers)]


def _importable(name: str) -> bool:
    import importlib

    module, _, attr = name.rpartition(".")
    try:
        return callable(getattr(importlib.import_module(module), attr, None))
    except ImportError:
        return False
