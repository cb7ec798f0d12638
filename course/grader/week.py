"""What a week's declaration holds: its exercises, written answers, checks and known answers.

The data types :func:`course.grader.declaration.load` fills from ``solutions/weekN/week.toml``
(and :func:`course.grader.known_answers.answers` from ``answers/<name>/answer.toml``), and
the one error every reader of a declaration raises. It promises:

- the types are frozen dataclasses with no behaviour beyond what they can say of themselves
  (a week's totals, the exercise a cell belongs to, whether an answer fails visibly);
- :class:`DeclarationError` carries one line naming the file (:func:`why` words the cause);
- it imports nothing (a learner's ``make test`` and the sandbox read it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

DECLARATION = "week.toml"
ANSWERS = "answers"


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


def why(error: Exception) -> str:
    """One line saying why a declaration file could not be read (a missing field, bad TOML,
    a value of the wrong type)."""
    if isinstance(error, KeyError):
        return f"the field {error.args[0]!r} is missing"
    return str(error).splitlines()[0] if str(error) else type(error).__name__
