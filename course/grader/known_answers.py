"""A week's known answers (``solutions/weekN/answers/<name>/``), read and checked.

Each answer folder holds an ``answer.toml`` (which exercise, which tests it must fail,
words its failure must say, whether it is the exercise's common mistake) and one ``<grade
id>.py`` per answer cell it replaces. It promises:

- :func:`answers` returns them only if each one's cells and tests belong to its exercise
  (:func:`answer_problems`), else raises :class:`course.grader.week.DeclarationError`;
- :func:`visibility_problems`: every exercise has exactly one common wrong answer, and it
  fails a visible test (so the lab's Validate shows it);
- :func:`answers_table` is what ``python -m course.grader.declaration answers`` prints.
"""

from __future__ import annotations

import tomllib

from course.grader.week import ANSWERS, Answer, DeclarationError, Week, why


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
            raise DeclarationError(f"{path}: {why(error)}") from None
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
