"""What a week *is*: its declaration, read by one loader and checked against its notebook.

Each week is declared once, in ``solutions/weekN/week.toml`` beside its source notebook:
its title, its exercises (number, title, points, answer cells, visible and hidden test
cells, the references in ``course/`` an answer must not call), its written answers, the
demos the executed solution must show and the text the release must not contain. Known
wrong and right answers are files beside it (``solutions/weekN/answers/<name>/``: an
``answer.toml`` saying which exercise and which tests it must fail, and one ``<grade
id>.py`` per answer cell it replaces, the cell's whole new source).

Why a TOML file and not the notebook's metadata: a submission carries its notebook's
metadata, so a student could edit what the grader reads from it; a file in ``solutions/``
stays with the instructor. It is also read and reviewed as text, and Python reads it
without a dependency (``tomllib``). ``nbgrader_config.py`` keeps it and the answers out of
every release.

It promises:

- :func:`load` returns a :class:`Week` only if the declaration is consistent with the
  notebook (:func:`problems`): every graded cell accounted for exactly once and in the
  notebook's order, each exercise under a heading ``Exercise N — <title>``, numbered
  1, 2, ... with visible tests before hidden ones, hidden tests holding nbgrader's hidden
  block and visible ones not, points adding up (:func:`reference_problems` checks that
  every reference exists).
  Anything else raises :class:`DeclarationError`, one line naming the file.
- :func:`answers` reads the answer files the same way (each answer's cells and tests must
  belong to its exercise).
- It imports nothing heavy and reads notebooks as plain JSON (:func:`cells_of`): the
  grader's test guard and the learner's ``make test`` use it.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
DECLARATION = "week.toml"
ANSWERS = "answers"
HIDDEN = "### BEGIN " + "HIDDEN TESTS"  # in two parts: the student edition ships this file
HIDDEN_END = "### END " + "HIDDEN TESTS"
HIDDEN_BLOCK = re.compile(re.escape(HIDDEN) + r".*?(?:" + re.escape(HIDDEN_END) + r"|\Z)", re.S)
"""A hidden-test block, to its end marker (or the end of the cell when it has none)."""
# An answer cell as the release leaves it, not yet attempted
BLANK = re.compile(r"#\s*YOUR CODE HERE\s*\n\s*raise NotImplementedError\(\)")


class DeclarationError(Exception):
    """A week's declaration is missing, unreadable, or does not match its notebook."""


@dataclass(frozen=True)
class Exercise:
    """One graded exercise: its answer cells, then its visible and hidden test cells."""

    number: int
    title: str
    points: float
    answers: tuple[str, ...]
    visible: tuple[str, ...]
    hidden: tuple[str, ...]
    references: tuple[str, ...] = ()  # module.function an answer must not call

    @property
    def tests(self) -> tuple[str, ...]:
        return self.visible + self.hidden

    @property
    def label(self) -> str:
        """What reports call it: ``Exercise 2 — a key on every money tool``."""
        return f"Exercise {self.number} — {self.title}"


@dataclass(frozen=True)
class Written:
    """A written answer, graded by a person against the week's rubric."""

    id: str
    points: float
    exercise: int | None = None  # the exercise it is part of, or None: a reflection


@dataclass(frozen=True)
class Checks:
    """How the course's own tests check the week (``[checks]``; tests/week_checks.py)."""

    at_least: int = 2  # known-wrong answers each exercise needs
    bundled: int | None = None  # wrong answers per exercise nbgrader grades (the rest:
    # forked); None: every one, with no forking
    cross_exercise: bool = False  # tests read other exercises' answers: no bundling
    bare: tuple[str, ...] = ()  # test cells whose failure may say only AssertionError
    timeout_s: float = 600  # for the whole grading of the week's answers


@dataclass(frozen=True)
class Week:
    """A week's declaration, checked against its notebook (:func:`load`)."""

    number: int
    title: str
    gains: str  # what the CloudWave graph gains (the README's weeks table)
    folder: Path  # solutions/weekN
    exercises: tuple[Exercise, ...]
    written: tuple[Written, ...] = ()
    demos: tuple[str, ...] = ()
    secrets: tuple[str, ...] = ()
    highlight: bool = False  # shown in bold in the README's table
    checks: Checks = field(default_factory=Checks)
    cell_points: dict[str, float] = field(default_factory=dict)  # from the notebook (load)

    @property
    def notebook(self) -> Path:
        return self.folder / f"week{self.number}.ipynb"

    @property
    def total(self) -> float:
        """The autograded points."""
        return sum(e.points for e in self.exercises)

    @property
    def written_points(self) -> float:
        return sum(w.points for w in self.written)

    def exercise(self, number: int) -> Exercise:
        return next(e for e in self.exercises if e.number == number)

    def exercise_of(self, grade_id: str) -> Exercise | None:
        """The exercise a test or answer cell belongs to (None: not an exercise's cell)."""
        return next((e for e in self.exercises
                     if grade_id in e.tests or grade_id in e.answers), None)

    def written_label(self, answer: Written) -> str:
        return self.exercise(answer.exercise).label if answer.exercise else "Reflection"


@dataclass(frozen=True)
class Answer:
    """A known answer to one exercise (``answers/<name>/``): ``cells`` replace the
    solution's answer cells of those grade ids; a wrong answer must fail exactly ``fails``
    (tests of its exercise), a right one (``fails`` empty) must get full marks. One wrong
    answer per exercise is its ``common`` one, the mistake learners make most: it must
    fail a visible test, so Validate in the lab says so (:meth:`fails_visibly`)."""

    name: str
    exercise: int
    cells: dict[str, str]
    fails: frozenset[str]
    says: str = ""  # words one of its failed tests' messages must contain
    why: str = ""
    common: bool = False  # the exercise's most common wrong answer

    @property
    def right(self) -> bool:
        return not self.fails

    def fails_visibly(self, week: Week) -> bool:
        """Whether a learner's Validate shows it failing (a visible test of its exercise
        is among the tests it fails)."""
        return bool(self.fails & set(week.exercise(self.exercise).visible))


def folder_of(week: int, root: Path = REPO) -> Path:
    return Path(root) / "solutions" / f"week{week}"


def declared_weeks(root: Path = REPO) -> list[int]:
    """Every week with a folder in ``solutions/``, in order (declared or not: :func:`load`
    raises for a folder without its declaration)."""
    return sorted(int(p.name[4:]) for p in (Path(root) / "solutions").glob("week*")
                  if p.is_dir() and p.name[4:].isdigit())


def load(week: int, root: Path = REPO, *, check: bool = True) -> Week:
    """Week ``week``'s declaration from ``root/solutions/weekN/week.toml``.

    Args:
        week: the week's number.
        root: the course folder (the repository, or a throwaway course).
        check: also check it against the notebook (:func:`problems`).

    Raises:
        DeclarationError: no such file, not valid TOML, a missing or mistyped field, or
            (with ``check``) a mismatch with the notebook; one line, naming the file.
    """
    path = folder_of(week, root) / DECLARATION
    if not path.is_file():
        raise DeclarationError(f"{_shown(path, root)} is missing: every week folder declares "
                               "its exercises there (docs/contributing.md, 'Add a week')")
    try:
        data = tomllib.loads(path.read_text())
        declared = _week(week, path.parent, data)
    except (tomllib.TOMLDecodeError, KeyError, TypeError, ValueError) as error:
        raise DeclarationError(f"{_shown(path, root)}: {_why(error)}") from None
    if check:
        try:
            found = problems(declared)
        except (ValueError, KeyError, TypeError) as error:
            raise DeclarationError(f"{declared.notebook.name} is not a readable notebook "
                                   f"({_why(error)})") from None
        if found:
            raise DeclarationError(f"{_shown(path, root)} does not match "
                                   f"{declared.notebook.name}: " + "; ".join(found))
        declared.cell_points.update(_points(declared.notebook))
    return declared


def answers(week: Week) -> dict[str, Answer]:
    """The week's known answers, ``{name: Answer}`` in name order.

    Raises:
        DeclarationError: an answer folder without ``answer.toml`` or cells, or whose
            cells or tests are not its exercise's.
    """
    found = {}
    for folder in sorted((week.folder / ANSWERS).glob("*/")):
        path = folder / "answer.toml"
        if not path.is_file():
            raise DeclarationError(f"{path}: missing (an answer folder says what it fails)")
        try:
            data = tomllib.loads(path.read_text())
            answer = Answer(folder.name, int(data["exercise"]),
                            {p.stem: p.read_text().rstrip("\n")
                             for p in sorted(folder.glob("*.py"))},
                            frozenset(data["fails"]), str(data.get("says", "")),
                            str(data.get("why", "")), bool(data.get("common", False)))
        except (tomllib.TOMLDecodeError, KeyError, TypeError, ValueError) as error:
            raise DeclarationError(f"{path}: {_why(error)}") from None
        wrong = answer_problems(week, answer)
        if wrong:
            raise DeclarationError(f"{folder}: " + "; ".join(wrong))
        found[answer.name] = answer
    return found


def answer_problems(week: Week, answer: Answer) -> list[str]:
    """What is wrong with ``answer`` for ``week`` (empty: nothing)."""
    exercise = next((e for e in week.exercises if e.number == answer.exercise), None)
    if exercise is None:
        return [f"week {week.number} has no exercise {answer.exercise}"]
    found = []
    if not answer.cells or not set(answer.cells) <= set(exercise.answers):
        found.append(f"its cells {sorted(answer.cells)} are not all answer cells of exercise "
                     f"{exercise.number} {list(exercise.answers)}")
    if not answer.fails <= set(exercise.tests):
        found.append(f"it fails {sorted(answer.fails - set(exercise.tests))}, not tests of "
                     f"exercise {exercise.number}")
    if answer.common and answer.right:
        found.append("it is marked common but fails nothing (common marks a wrong answer)")
    return found


def visibility_problems(week: Week, known: dict[str, Answer]) -> list[str]:
    """Exercises whose most common wrong answer is not declared once, or would pass
    every visible test (empty: none)."""
    found = []
    for exercise in week.exercises:
        common = [a for a in known.values() if a.exercise == exercise.number and a.common]
        if len(common) != 1:
            found.append(f"{exercise.label}: {len(common)} answers marked common, not one")
        elif not common[0].fails_visibly(week):
            found.append(f"{exercise.label}: its common wrong answer {common[0].name} fails "
                         "no visible test")
    return found


def answers_table(week: Week, known: dict[str, Answer]) -> str:
    """Per exercise, its wrong answers and whether each fails a visible test: what
    ``python -m course.grader.declaration answers`` prints."""
    rows = [f"week {week.number}: {week.title}"]
    for exercise in week.exercises:
        rows.append(f"  {exercise.label}")
        for answer in known.values():
            if answer.exercise == exercise.number and not answer.right:
                seen = "visible" if answer.fails_visibly(week) else "hidden only"
                rows.append(f"    {'*' if answer.common else ' '} {answer.name:<48} {seen}")
    return "\n".join(rows)


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
    import json

    found = []
    for cell in json.loads(notebook.read_text())["cells"]:
        source = cell.get("source", "")
        found.append(Cell(cell.get("cell_type", ""), "".join(source) if isinstance(source, list)
                          else source, cell.get("metadata", {}).get("nbgrader", {})))
    return found


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


def _points(notebook: Path) -> dict[str, float]:
    """``{grade id: points}`` of every graded cell, from nbgrader's metadata."""
    return {c.nbgrader["grade_id"]: float(c.nbgrader.get("points", 0))
            for c in cells_of(notebook) if c.nbgrader.get("grade")}


def _week(week: int, folder: Path, data: dict[str, Any]) -> Week:
    checks = data.get("checks", {})
    return Week(
        number=week, title=str(data["title"]), gains=str(data["gains"]), folder=folder,
        exercises=tuple(Exercise(int(e["number"]), str(e["title"]), float(e["points"]),
                                 _ids(e["answers"]), _ids(e["visible"]), _ids(e["hidden"]),
                                 _ids(e.get("references", [])))
                        for e in data["exercises"]),
        written=tuple(Written(str(w["id"]), float(w["points"]),
                              int(w["exercise"]) if "exercise" in w else None)
                      for w in data.get("written", [])),
        demos=_ids(data.get("demos", [])), secrets=_ids(data.get("secrets", [])),
        highlight=bool(data.get("highlight", False)),
        checks=Checks(at_least=int(checks.get("at_least", 2)),
                      bundled=int(checks["bundled"]) if "bundled" in checks else None,
                      cross_exercise=bool(checks.get("cross_exercise", False)),
                      bare=_ids(checks.get("bare", [])),
                      timeout_s=float(checks.get("timeout_s", 600))))


def _ids(values: Any) -> tuple[str, ...]:
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        raise TypeError(f"expected a list of strings, got {values!r}")
    return tuple(values)


def _importable(name: str) -> bool:
    import importlib

    module, _, attr = name.rpartition(".")
    try:
        return callable(getattr(importlib.import_module(module), attr, None))
    except ImportError:
        return False


def _why(error: Exception) -> str:
    if isinstance(error, KeyError):
        return f"the field {error.args[0]!r} is missing"
    return str(error).splitlines()[0] if str(error) else type(error).__name__


def _shown(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


def every_week(root: Path = REPO) -> Iterator[Week]:
    """Every week folder's declaration, checked, in order (:func:`load` for each)."""
    for week in declared_weeks(root):
        yield load(week, root)


def weeks_table(root: Path = REPO) -> str:
    """The README's table of weeks, made from the declarations (a test checks the README
    holds exactly this; ``python -m course.grader.declaration table`` prints it)."""
    rows = ["| week | title | the CloudWave graph gains | notebook |", "|---|---|---|---|"]
    for week in every_week(root):
        title = f"**{week.title}**" if week.highlight else week.title
        path = f"week{week.number}/week{week.number}.ipynb"
        rows.append(f"| {week.number} | {title} | {week.gains} | [`{path}`]({path}) "
                    f"({week.total:g} autograded points + {week.written_points:g} for written "
                    "answers) |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    """``python -m course.grader.declaration [check|table|answers]``: check every week's
    declaration against its notebook (one line per week, or the problem), print the
    README's table of weeks, or each exercise's wrong answers (``*`` the common one) and
    whether each fails a visible test."""
    import sys

    command = (argv if argv is not None else sys.argv[1:]) or ["check"]
    if command == ["table"]:
        print(weeks_table())
        return 0
    if command == ["answers"]:
        print("\n".join(answers_table(week, answers(week)) for week in every_week()))
        return 0
    if command != ["check"]:
        print("usage: python -m course.grader.declaration [check|table|answers]",
              file=sys.stderr)
        return 2
    failed = 0
    for number in declared_weeks():
        try:
            week = load(number)
            found = answers(week)
            print(f"week{number}: {len(week.exercises)} exercises, {week.total:g} points "
                  f"+ {week.written_points:g} written, {len(found)} known answers")
        except DeclarationError as error:
            print(f"week{number}: {error}", file=sys.stderr)
            failed = 1
    return failed


if __name__ == "__main__":
    raise SystemExit(main())
