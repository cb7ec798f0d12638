"""What ``make check`` says of one graded submission: a row per test cell, then what to do.

It promises:

- :class:`Report` lists every test cell, one row each, named by what it is ("visible
  test of Exercise 2 — ...", "hidden test of ..."), with the points it earned out of its
  own points (never the exercise's total next to them), and, for each failed one, what
  the test said. Cells stopped by the time limit (``ExecutePreprocessor.timeout``) are
  named as such.
- Its last line (:meth:`Report.summary`) is exactly ``weekN: <earned>/<total>``, where
  ``<total>`` counts the autograded tests. Written answers (manually graded cells) are
  counted with their points and left out of the total; the report says who grades them
  (your instructor, or you against ``rubrics/weekN.md``).
- A notebook whose kernel died is reported as such; the first failure's next step is
  worded by :mod:`course.grader.verdict`, as everywhere.

How a report is filled from nbgrader's gradebook and executed notebook:
:mod:`course.grader.scoring`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from course.grader.verdict import next_step

REPO = Path(__file__).resolve().parents[2]


@dataclass
class CellResult:
    grade_id: str
    exercise: str  # the heading the cell sits under, without its "(N points)"
    points: float
    earned: float
    message: str = ""  # what the failing test said (its last error line)
    timed_out: bool = False
    kind: str = "test"  # "visible test" or "hidden test"

    @property
    def passed(self) -> bool:
        return self.earned >= self.points

    @property
    def label(self) -> str:
        """What the report calls this cell: "hidden test of Exercise 2 — ..."."""
        return f"{self.kind} of {self.exercise}"


@dataclass
class Report:
    week: int
    student: str
    submission: Path
    tests: list[CellResult] = field(default_factory=list)
    written: list[tuple[str, str, float]] = field(default_factory=list)  # (id, exercise, pts)
    missing: list[str] = field(default_factory=list)  # notebooks not in the submission
    stopped: list[str] = field(default_factory=list)  # cells the time limit stopped
    kernel_died: bool = False  # the notebook's kernel died: nothing could be scored
    conformed: list[str] = field(default_factory=list)  # accidents put right (conform.py)
    flags: list[str] = field(default_factory=list)  # held for a person (flags.py)
    timeout_s: float = 0

    @property
    def earned(self) -> float:
        return sum(t.earned for t in self.tests)

    @property
    def total(self) -> float:
        return sum(t.points for t in self.tests)

    def failed(self) -> list[CellResult]:
        return [t for t in self.tests if not t.passed]

    def summary(self) -> str:
        return f"week{self.week}: {num(self.earned)}/{num(self.total)}"

    def rubric(self) -> str:
        """Where a self-learner finds what each written answer must say."""
        rubric = REPO / "rubrics" / f"week{self.week}.md"
        if rubric.is_file():
            return (f"{rubric.relative_to(REPO)} has a model answer for each and says what "
                    "earns each point")
        return f"compare them with the model answers in solutions/week{self.week}/"

    def again(self) -> str:
        """The command that grades this same folder again."""
        default = (REPO / f"week{self.week}").resolve()
        if Path(self.submission).resolve() == default:
            return f"make check WEEK={self.week}"
        return f"make check WEEK={self.week} SUBMISSION={shown(self.submission)}"

    def lines(self) -> list[str]:
        out = [f"Grading {shown(self.submission)} with week {self.week}'s tests (the same "
               "tests, hidden ones included, that an instructor runs)", ""]
        if self.kernel_died:
            out += ["  KERNEL DIED: the notebook's Python process died while it was graded, so",
                    "  none of its tests could be scored. Usually a cell killed its own process",
                    "  (os._exit, os.kill(os.getpid(), ...), kill_self() outside run_forked) or",
                    "  ran out of memory. Run the notebook top to bottom in JupyterLab to find",
                    "  the cell after which the kernel restarts.", ""]
        out += [f"  PUT RIGHT: {line}" for line in self.conformed]
        out += [""] if self.conformed else []
        if self.flags:
            out.append("  FLAGGED for a person: this code reaches into the kernel, the grader "
                       "or the course itself, which no exercise needs; an instructor will "
                       "read it before the score counts:")
            out += [f"    FLAG  {line}" for line in self.flags]
            out.append("")
        for name in self.missing:
            out.append(f"  MISSING   {name}: not in {shown(self.submission)}; its tests score 0")
        if self.stopped:
            out.append(f"  TIME LIMIT: these cells ran for more than {num(self.timeout_s)} s and "
                       "were stopped (look for a loop that never ends); grading went on:")
            out += [f"    - {where}" for where in self.stopped]
            out.append("")
        for t in self.tests:
            mark = "ok  " if t.passed else ("TIME" if t.timed_out else "FAIL")
            out.append(f"  {mark}  {num(t.earned):>3}/{num(t.points):<3} {t.label}  "
                       f"[{t.grade_id}]")
        failed = self.failed()
        if failed:
            first = failed[0]
            said = first.message or "no message (the test cell did not run)"
            answer = first.message.startswith("its answer cell raised ")
            said = said.removeprefix("its answer cell raised ").split("; fix that first")[0]
            out += ["", f"What to do next: {next_step(first.exercise, said, answer=answer)}"]
            out += ["", "What the failing tests said:"]
            for t in failed:
                out.append(f"  - {t.label} [{t.grade_id}]")
                said = t.message or "no message (the test cell did not run)"
                out += [f"      {line}" for line in said.splitlines()]
            out.append("  Fix the code of those exercises, run the notebook top to bottom, save "
                       f"it, and run `{self.again()}` again.")
        if self.written:
            points = sum(p for _, _, p in self.written)
            cells = f"{len(self.written)} cell{'s' if len(self.written) != 1 else ''}"
            out += ["", f"Written answers ({cells}, {num(points)} points) are not in the total "
                    "below. In a class your instructor grades them; on your own, grade them "
                    f"yourself: {self.rubric()}."]
        out += ["", self.summary()]
        return out


def num(value: float) -> str:
    return f"{value:g}"


def shown(path: Path) -> str:
    """``path`` as the person at the terminal reads it: relative to their folder, else whole."""
    path = Path(path).resolve()
    try:
        return str(path.relative_to(Path.cwd().resolve())) + "/"
    except ValueError:
        return str(path)
