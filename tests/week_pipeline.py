"""One graded week's notebook tests, from a declaration of its known-wrong answers.

A week's test module (``tests/test_week1.py``, ``tests/test_week2.py``) declares each
wrong answer as a :class:`Wrong` (the cells a student would write, the exercise they
belong to, the test cells they must fail) and calls :func:`grade_week` once from a
module-scoped fixture: ONE nbgrader run grades the solution and every wrong answer
(keeping its course folder, so the regenerated release and the executed solution can
be checked), while ``make check WEEK=N`` runs on the untouched release in the
background. The ``assert_*`` functions are the checks every week makes.

Wrong answers travel in *bundles*: one submission holds one wrong answer per exercise
(the k-th of each), so a week with three wrong answers per exercise executes its
notebook four times (solution + three bundles), not thirteen. That stays sound because
:func:`assert_tests_use_only_their_own_answers` proves that no test cell reads a name
defined by another exercise's answer cell, and each wrong answer must fail exactly its
declared tests of its own exercise (a wrong answer leaking into another exercise shows
up there as an undeclared failure).
"""

from __future__ import annotations

import ast
import json
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import pytest
from weeks import (
    cells,
    code_cells_with_outputs,
    errors_in,
    exercises_and_test_kinds,
    finish,
    graded,
    nbgrader_state_in_repo,
    start_make_check,
    wrong_answer,
)

from course.grading import autograde as grading

NBGRADER_WARNINGS = [  # from nbgrader's own code (gradebook, re-added cells): harmless
    pytest.mark.filterwarnings("ignore:Object of type <Submitted:sqlalchemy.exc.SAWarning"),
    pytest.mark.filterwarnings("ignore::nbformat.warnings.MissingIDFieldWarning"),
]


@dataclass(frozen=True)
class Wrong:
    """A realistic wrong answer: ``edits`` ({grade_id: cell source}) to the solution; it
    must fail exactly the test cells ``fails``, all of them tests of ``exercise``."""

    exercise: int
    edits: dict[str, str]
    fails: frozenset[str]


def bundles(wrongs: dict[str, Wrong]) -> dict[str, dict[str, str]]:
    """``{bundle name: {wrong-answer name: ...}}``: the k-th wrong answer of every exercise."""
    per_exercise: dict[int, list[str]] = defaultdict(list)
    for name, wrong in wrongs.items():
        per_exercise[wrong.exercise].append(name)
    rounds = max(len(names) for names in per_exercise.values())
    return {f"wrong{k + 1}": {names[k]: names[k] for names in per_exercise.values()
                              if k < len(names)} for k in range(rounds)}


def grade_week(week: int, source: Path, wrongs: dict[str, Wrong], root: Path) -> dict:
    """Grade the solution and every bundle of wrong answers in one nbgrader run; ``make
    check`` on the release meanwhile. ``{"course", "reports", "bundle_of", "blank"}``."""
    folders, bundle_of = {}, {}
    for bundle, names in bundles(wrongs).items():
        edits = {}
        for name in names:
            edits.update(wrongs[name].edits)
            bundle_of[name] = bundle
        folders[bundle] = wrong_answer(source, root / bundle, edits)
    before = nbgrader_state_in_repo()
    jobs = {"blank": start_make_check(week)}
    try:
        reports = grading.grade(week, {"solution": source.parent, **folders},
                                keep=root / "course")
    finally:
        done = finish(jobs)
    assert nbgrader_state_in_repo() == before, "grading wrote nbgrader files into the repo"
    return {"course": root / "course", "reports": reports, "bundle_of": bundle_of, **done}


def exercise_of_tests(source: Path) -> dict[str, int]:
    """``{grade_id: exercise number}`` of every autograded test cell (its ``# Exercise N,``)."""
    found = {}
    for cell in cells(source):
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("grade") and not meta.get("solution"):
            number = cell.source.split(",")[0].removeprefix("# Exercise ")
            found[meta["grade_id"]] = int(number)
    return found


def assert_wrong_answers_cover_every_exercise(source: Path, wrongs: dict[str, Wrong],
                                             at_least: int = 2) -> None:
    """Each wrong answer edits answer cells of its exercise and expects failures among that
    exercise's tests; every exercise has at least ``at_least`` wrong answers."""
    tests, answers = exercise_of_tests(source), exercise_of_answers(source)
    count: dict[int, int] = defaultdict(int)
    for name, wrong in wrongs.items():
        assert wrong.fails and {tests.get(g) for g in wrong.fails} == {wrong.exercise}, name
        assert {answers.get(g) for g in wrong.edits} == {wrong.exercise}, name
        count[wrong.exercise] += 1
    assert sorted(count) == sorted(set(tests.values()))
    assert min(count.values()) >= at_least, dict(count)


def assert_no_outputs(path: Path) -> None:
    assert code_cells_with_outputs(path) == [], "clear the outputs before committing"


def assert_every_exercise_has_visible_and_hidden_tests(source: Path, exercises: int,
                                                       autograded: float,
                                                       written: list[float]) -> None:
    kinds = exercises_and_test_kinds(source)
    assert sorted(kinds) == [f"Exercise {n}" for n in range(1, exercises + 1)]
    assert all(k == {True, False} for k in kinds.values()), kinds
    meta = graded(source)
    for grade_id, m in meta.items():
        assert m["schema_version"] == 3 and m["points"] > 0, grade_id
        assert m["locked"] != m["solution"], grade_id  # tests locked, answers open
    ids = [c.metadata["nbgrader"]["grade_id"] for c in cells(source) if "nbgrader" in c.metadata]
    assert len(ids) == len(set(ids)), "grade ids must be unique"
    assert sum(m["points"] for m in meta.values() if not m["solution"]) == autograded
    written_cells = [c for c in cells(source) if c.metadata.get("nbgrader", {}).get("grade")
                     and c.metadata["nbgrader"]["solution"]]
    assert [c.cell_type for c in written_cells] == ["markdown"] * len(written)
    assert [c.metadata["nbgrader"]["points"] for c in written_cells] == written


def assert_release_hides_the_answers(source: Path, release: Path, secrets: list[str]) -> None:
    text = release.read_text()
    for secret in ["BEGIN SOLUTION", "BEGIN HIDDEN TESTS", *secrets]:
        assert secret not in text, secret
    assert graded(release).keys() == graded(source).keys()
    answer_cells = [c for c in cells(source) if c.cell_type == "code"
                    and c.metadata.get("nbgrader", {}).get("solution")]
    assert text.count("raise NotImplementedError()") == len(answer_cells)


def assert_release_is_generated(pipeline: dict, week: int, release: Path) -> None:
    fresh = json.loads((pipeline["course"] / f"week{week}" / f"week{week}.ipynb").read_text())
    assert fresh == json.loads(release.read_text()), (
        f"week{week}/ is out of date: run `make release` and commit week{week}/")


def executed_solution(pipeline: dict, week: int) -> Path:
    return pipeline["course"] / "autograded" / "solution" / f"week{week}" / f"week{week}.ipynb"


def assert_solution_runs_clean(pipeline: dict, week: int) -> None:
    assert errors_in(executed_solution(pipeline, week)) == []


def assert_full_marks(pipeline: dict, week: int, total: float, written: int) -> None:
    solution = pipeline["reports"]["solution"]
    assert [t.grade_id for t in solution.failed()] == []
    assert solution.summary() == f"week{week}: {total:g}/{total:g}"
    assert len(solution.written) == written


def assert_blank_release_scores_zero(pipeline: dict, week: int, total: float) -> None:
    done = pipeline["blank"]
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == f"week{week}: 0/{total:g}"


def assert_wrong_answer_loses_its_own_points(pipeline: dict, source: Path, name: str,
                                             wrong: Wrong) -> None:
    """In its bundle, the wrong answer's exercise fails exactly the declared tests, each
    failure says why, and the report shows no hidden test code."""
    report = pipeline["reports"][pipeline["bundle_of"][name]]
    exercise = exercise_of_tests(source)
    assert set(wrong.edits) and all(exercise_of_answers(source)[g] == wrong.exercise
                                    for g in wrong.edits), f"{name} edits another exercise"
    failed = {t.grade_id for t in report.failed() if exercise[t.grade_id] == wrong.exercise}
    assert failed == wrong.fails, f"{name}: failed {sorted(failed)}, expected {sorted(wrong.fails)}"
    lost = sum(t.points for t in report.tests if t.grade_id in failed)
    own = sum(t.points for t in report.tests if exercise[t.grade_id] == wrong.exercise)
    earned = sum(t.earned for t in report.tests if exercise[t.grade_id] == wrong.exercise)
    assert earned == own - lost < own
    said = "\n".join(report.lines())
    assert "BEGIN HIDDEN TESTS" not in said and "_problems" not in said
    for test in report.failed():
        assert test.message, f"{name}: {test.grade_id} failed without saying why"


def assert_every_bundle_loses_exactly_its_wrong_answers(pipeline: dict,
                                                        wrongs: dict[str, Wrong]) -> None:
    """A bundle fails the union of its wrong answers' tests and nothing else."""
    for bundle, report in pipeline["reports"].items():
        if bundle == "solution":
            continue
        expected = set().union(*(wrongs[n].fails for n, b in pipeline["bundle_of"].items()
                                 if b == bundle))
        assert {t.grade_id for t in report.failed()} == expected, bundle


def _cells_by_exercise(source: Path):
    """``[(exercise, kind, cell)]`` for answer and test cells; an answer cell belongs to the
    exercise of the first test cell after it."""
    found, waiting = [], []
    for cell in cells(source):
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type != "code":
            continue
        if meta.get("solution"):
            waiting.append(cell)
        elif meta.get("grade"):
            number = int(cell.source.split(",")[0].removeprefix("# Exercise "))
            found += [(number, "answer", c) for c in waiting] + [(number, "test", cell)]
            waiting = []
    return found


def exercise_of_answers(source: Path) -> dict[str, int]:
    return {c.metadata["nbgrader"]["grade_id"]: n for n, kind, c in _cells_by_exercise(source)
            if kind == "answer"}


def _defined(code: str) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
    return names


def _clean(code: str) -> str:
    return "\n".join(line for line in code.splitlines() if not line.lstrip().startswith("###"))


def assert_tests_use_only_their_own_answers(source: Path) -> None:
    """No test cell reads a name that another exercise's answer cell defines."""
    owner: dict[str, int] = {}
    for number, kind, cell in _cells_by_exercise(source):
        if kind == "answer":
            for name in _defined(_clean(cell.source)):
                owner[name] = number
    for number, kind, cell in _cells_by_exercise(source):
        if kind == "test":
            read = {n.id for n in ast.walk(ast.parse(_clean(cell.source)))
                    if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
            foreign = {n for n in read if owner.get(n, number) != number}
            assert not foreign, f"a test of exercise {number} reads {sorted(foreign)}"
