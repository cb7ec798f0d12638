"""Which known answers a week's grading run grades, and how (:mod:`week_pipeline`).

- :func:`delegations`: for every reference an exercise declares, an answer that hands the
  work to it, made automatically; :func:`unmatched_references` lists references with no
  delegating answer at all.
- :func:`bundles`: the K-th wrong answer of every exercise in one submission, sound
  because no test reads a name another exercise's answer defines
  (:func:`answers_used_across_exercises`); :func:`apart`: the grouping for a week whose
  tests do (``cross_exercise``), where no two answers in a notebook share a cell or an
  expected failure.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
from collections import defaultdict
from collections.abc import Callable, Mapping

from weeks import cells

from course.grader.known_answers import answers
from course.grader.week import Answer, Week


def delegations(week: Week) -> dict[str, Answer]:
    """For every reference an exercise declares that no known wrong answer already hands
    the work to, an answer that does: the solution's answer cell with one of its functions
    redefined to call the reference (matched by its parameters and, where several fit, its
    name). It must lose points. A reference no function of the answer cells fits gets none
    (see :func:`unmatched_references`)."""
    sources = {c.metadata.get("nbgrader", {}).get("grade_id"): c.source
               for c in cells(week.notebook)}
    known = answers(week)
    made = {}
    for exercise in week.exercises:
        for reference in exercise.references:
            if _written_for(reference, exercise.number, known):
                continue  # a known wrong answer hands the work to it already
            fit = _fitting_function(reference, {g: sources[g] for g in exercise.answers})
            if fit is None:
                continue
            grade_id, function = fit
            module, _, name = reference.rpartition(".")
            passed = ", ".join(f"{p}={p}" for p in _parameters(_resolve(reference))
                               if p in _arguments(function))
            params = ast.unparse(function.args)
            cell = (f"{sources[grade_id]}\n\n\nfrom {module} import {name} as _reference\n\n\n"
                    f"def {function.name}({params}):\n    return _reference({passed})\n")
            answer_name = f"ex{exercise.number}_auto_delegates_to_{name}"
            made[answer_name] = Answer(answer_name, exercise.number, {grade_id: cell},
                                       frozenset(exercise.tests),
                                       why=f"automatic: {function.name} calls {reference}")
    return made


def unmatched_references(week: Week) -> list[str]:
    """References no known wrong answer imports and no automatic delegation could be made
    for (empty: every reference has a delegating wrong answer)."""
    made = {(a.exercise, a.name.rpartition("_delegates_to_")[2])
            for a in delegations(week).values()}
    known = answers(week)
    return [f"exercise {e.number}: {ref}" for e in week.exercises for ref in e.references
            if (e.number, ref.rpartition(".")[2]) not in made
            and not _written_for(ref, e.number, known)]


def _written_for(reference: str, exercise: int, known: Mapping[str, Answer]) -> bool:
    """Does a known wrong answer of ``exercise`` import ``reference``?"""
    return any(a.exercise == exercise and a.fails and _imports(reference,
                                                                "\n".join(a.cells.values()))
               for a in known.values())


def _imports(reference: str, source: str) -> bool:
    """Does ``source`` import ``reference`` (``module.function``) from the course package,
    by its name or as an attribute of an imported ``course`` module?"""
    name = reference.rpartition(".")[2]
    attribute = re.search(rf"\.{name}\b", source) is not None
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("course") and (
                any(alias.name == name for alias in node.names)
                or (reference.startswith(f"{node.module}.") and attribute)):
            return True
        if isinstance(node, ast.Import) and attribute and any(
                a.name.startswith("course") for a in node.names):
            return True
    return False


def _fitting_function(reference: str, sources: Mapping[str, str]
                      ) -> tuple[str, ast.FunctionDef] | None:
    """The answer cell's top-level function that can stand for ``reference``: it takes every
    parameter the reference requires; among several, the one named like it."""
    required = _parameters(_resolve(reference), required=True)
    name = reference.rpartition(".")[2]
    fits = [(grade_id, node) for grade_id, source in sources.items()
            for node in ast.parse(source).body
            if isinstance(node, ast.FunctionDef) and set(required) <= set(_arguments(node))]
    for better in (lambda n: n == name, lambda n: name.startswith(n)):
        named = [fit for fit in fits if better(fit[1].name)]
        if named:
            return named[-1]
    return fits[0] if len(fits) == 1 else None


def _resolve(reference: str):
    module, _, attr = reference.rpartition(".")
    return getattr(importlib.import_module(module), attr)


def _parameters(function: Callable, *, required: bool = False) -> list[str]:
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD,
             inspect.Parameter.KEYWORD_ONLY)
    return [p.name for p in inspect.signature(function).parameters.values()
            if p.kind in kinds and (not required or p.default is inspect.Parameter.empty)]


def _arguments(node: ast.FunctionDef) -> list[str]:
    return [a.arg for a in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs)]


def bundles(wrongs: Mapping[str, Answer]) -> dict[str, list[str]]:
    """``{bundle: [wrong-answer names]}``: bundle ``wrongK`` holds the K-th wrong answer of
    every exercise. Sound only when no test reads another exercise's answers
    (:func:`answers_used_across_exercises`); each wrong answer must still fail exactly its
    own tests (a leak shows up as an undeclared failure)."""
    per_exercise: dict[int, list[str]] = defaultdict(list)
    for name, wrong in wrongs.items():
        per_exercise[wrong.exercise].append(name)
    rounds = max((len(names) for names in per_exercise.values()), default=0)
    return {f"wrong{k + 1}": [names[k] for names in per_exercise.values() if k < len(names)]
            for k in range(rounds)}


def apart(wrongs: Mapping[str, Answer]) -> dict[str, list[str]]:
    """The wrong answers grouped so that none in a notebook edits the same cell or is
    expected to fail the same test as another: each failed test then points at exactly
    one wrong answer (for a week whose tests read other exercises' answers)."""
    rounds: list[list[str]] = []
    for name, wrong in wrongs.items():
        spot = next((r for r in rounds if all(
            not (set(wrong.cells) & set(wrongs[m].cells) or wrong.fails & wrongs[m].fails)
            for m in r)), None)
        if spot is None:
            spot = []
            rounds.append(spot)
        spot.append(name)
    return {f"wrong{number}": names for number, names in enumerate(rounds, 1)}


def answers_used_across_exercises(week: Week) -> list[str]:
    """``"<test id> (exercise N) reads <name> from <answer id>"`` for every test cell that
    reads a name an answer cell of another exercise defines at its top level (a function, a
    class, an assigned name). Empty: bundling wrong answers across exercises is sound."""
    sources = {c.metadata.get("nbgrader", {}).get("grade_id"): c.source
               for c in cells(week.notebook)}
    defined: dict[str, tuple[int, str]] = {}
    for exercise in week.exercises:
        for grade_id in exercise.answers:
            for node in ast.parse(sources[grade_id]).body:
                if isinstance(node, ast.FunctionDef | ast.ClassDef):
                    defined[node.name] = (exercise.number, grade_id)
                elif isinstance(node, ast.Assign | ast.AnnAssign):
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    defined.update({t.id: (exercise.number, grade_id) for t in targets
                                    if isinstance(t, ast.Name)})
    problems = []
    for exercise in week.exercises:
        for grade_id in exercise.tests:
            read = {n.id for n in ast.walk(ast.parse(sources[grade_id]))
                    if isinstance(n, ast.Name)}
            problems += [f"{grade_id} (exercise {exercise.number}) reads {name} from "
                         f"{defined[name][1]}" for name in sorted(read)
                         if name in defined and defined[name][0] != exercise.number]
    return problems
