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

- :func:`load` returns a :class:`course.grader.week.Week` only if the declaration is
  consistent with the notebook (:func:`course.grader.consistency.problems`). Anything else
  raises :class:`course.grader.week.DeclarationError`, one line naming the file.
- :func:`weeks_table` is the README's table of weeks, made from the declarations.
- ``python -m course.grader.declaration check|answers|table`` (:func:`main`) checks every
  week (and its known answers, :mod:`course.grader.known_answers`), lists the wrong
  answers, or prints the table.
- It imports nothing heavy and reads notebooks as plain JSON
  (:func:`course.grader.cells.cells_of`): the grader's test guard and the learner's
  ``make test`` use it.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from course.grader.cells import points_of
from course.grader.consistency import problems
from course.grader.week import DECLARATION, Checks, DeclarationError, Exercise, Week, Written, why

REPO = Path(__file__).resolve().parents[2]


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
        raise DeclarationError(f"{_shown(path, root)}: {why(error)}") from None
    if check:
        try:
            found = problems(declared)
        except (ValueError, KeyError, TypeError) as error:
            raise DeclarationError(f"{declared.notebook.name} is not a readable notebook "
                                   f"({why(error)})") from None
        if found:
            raise DeclarationError(f"{_shown(path, root)} does not match "
                                   f"{declared.notebook.name}: " + "; ".join(found))
        declared.cell_points.update(points_of(declared.notebook))
    return declared


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

    from course.grader.known_answers import answers, answers_table

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
