"""The week-test machinery: what every declared week is checked for, and shared helpers.

A week is declared once, in ``solutions/weekN/week.toml``, and its known answers are files
in ``solutions/weekN/answers/`` (:mod:`course.grading.declaration`). ``tests/conftest.py``
collects every ``tests/test_weekN.py`` as a :class:`WeekModule`: the module's own tests,
then :class:`EveryWeek`'s checks for that week. A week folder without a declaration, or
a declaration that disagrees with its notebook, is a collection error naming the file.

The checks share one module-scoped :func:`grade_week` run (the ``pipeline`` fixture): it
runs ``make check WEEK=N`` on the untouched release in a background process while this
process grades, in ONE nbgrader run (:func:`course.grading.autograde.grade`), the solution
and the wrong answers nbgrader grades, keeping its course folder. Those travel in bundles
(:func:`bundles`): one submission holds the K-th wrong answer of every exercise, sound
because no test reads a name another exercise's answer defines
(:func:`answers_used_across_exercises`); a week whose tests do (``cross_exercise``)
grades every wrong answer with nbgrader, grouped so that no two share a cell or an
expected failure (:func:`apart`).

Every other answer, every right answer and every exercise's automatic delegation
(:func:`delegations`: an answer that hands the work to the exercise's reference in
``course/``) is checked by :mod:`forked_answers`: one run of the solution forks its kernel
before each exercise, and each child runs one answer and that exercise's tests. The forked
verdicts of the bundled answers must match nbgrader's, test by test and message by message.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import re
import subprocess
import sys
from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import pytest

from course.grading.declaration import Answer, DeclarationError, Week, answers, load

REPO = Path(__file__).resolve().parent.parent

GRADE_IN_A_PROCESS = """
import json, sys
from pathlib import Path
from course.grading import autograde as grading
week, repo, timeout_s, folders = json.loads(sys.argv[1])
reports = grading.grade(week, {k: Path(v) for k, v in folders.items()}, repo=Path(repo),
                        timeout_s=timeout_s)
print("REPORTS " + json.dumps({name: {
    "summary": r.summary(), "earned": r.earned, "lines": r.lines(),
    "kernel_died": r.kernel_died,
    "failed": {t.grade_id: {"message": t.message, "timed_out": t.timed_out,
                            "points": t.points} for t in r.failed()},
} for name, r in reports.items()}))
"""

NBGRADER_WARNINGS = [  # ``pytestmark`` of a week's module: from nbgrader's own code (the
    # gradebook, re-added cells), harmless
    pytest.mark.filterwarnings("ignore:Object of type <Submitted:sqlalchemy.exc.SAWarning"),
    pytest.mark.filterwarnings("ignore::nbformat.warnings.MissingIDFieldWarning"),
]


# ------------------------------------------------------------------ notebooks and courses
def nbgrader_cell(source: str, **meta) -> nbformat.NotebookNode:
    """A code cell with nbgrader metadata (``grade=True, points=2, grade_id=...`` etc.)."""
    made = nbformat.v4.new_code_cell(source)
    made.metadata["nbgrader"] = {"schema_version": 3, "task": False, "locked": False,
                                 "grade": False, "solution": False, **meta}
    return made


def tiny_course(root: Path, week: int, cells: list, declaration: str) -> Path:
    """A throwaway course at ``root``: ``solutions/week<week>/week<week>.ipynb`` made of
    ``cells``, its ``week.toml`` (``declaration``, TOML) and the repository's
    ``nbgrader_config.py``. Returns ``root``."""
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": {
        "name": "python3", "display_name": "Python 3", "language": "python"}})
    nb.cells = cells
    folder = root / "solutions" / f"week{week}"
    folder.mkdir(parents=True)
    nbformat.write(nb, folder / f"week{week}.ipynb")
    (folder / "week.toml").write_text(declaration)
    (root / "nbgrader_config.py").write_text((REPO / "nbgrader_config.py").read_text())
    return root


def cells(path: Path) -> list:
    return nbformat.read(path, as_version=4).cells


def graded(path: Path) -> dict[str, dict]:
    """``{grade_id: nbgrader metadata}`` of every graded cell (tests and written answers)."""
    return {c.metadata["nbgrader"]["grade_id"]: c.metadata["nbgrader"] for c in cells(path)
            if c.metadata.get("nbgrader", {}).get("grade")}


def autograded_points(path: Path) -> float:
    return sum(g["points"] for g in graded(path).values() if not g["solution"])


def code_cells_with_outputs(path: Path) -> list[str]:
    """The first line of every code cell that carries an output or an execution count."""
    return [c.source[:60] for c in cells(path)
            if c.cell_type == "code" and (c.outputs or c.execution_count is not None)]


def submission(source: Path, target: Path, edits: Mapping[str, str]) -> Path:
    """A submission folder made from the solution notebook with some cells replaced:
    ``{grade_id: new source}``. Every grade id must exist and change its cell."""
    nb = nbformat.read(source, as_version=4)
    found = set()
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in edits:
            assert edits[grade_id] != cell.source, f"the answer for {grade_id} changes nothing"
            cell.source = edits[grade_id]
            found.add(grade_id)
    assert found == set(edits), f"no such cells: {set(edits) - found}"
    target.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, target / source.name)
    return target


def source_of(week: int) -> Path:
    return REPO / "solutions" / f"week{week}" / f"week{week}.ipynb"


def release_of(week: int) -> Path:
    return REPO / f"week{week}" / f"week{week}.ipynb"


def errors_in(executed: Path) -> list[tuple[str, str, str]]:
    """(cell start, error name, message) of every error output in an executed notebook."""
    return [(c.source[:50], o.get("ename"), o.get("evalue"))
            for c in cells(executed) for o in c.get("outputs", [])
            if o.get("output_type") == "error"]


def output_text(executed: Path) -> str:
    """Everything an executed notebook printed or displayed, one cell after another. A
    cell's printed text is joined as printed: a busy kernel may deliver one ``print`` line
    in several stream chunks, so chunks are not separated."""
    parts = []
    for cell in cells(executed):
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream":
                parts.append(output.get("text", ""))
            else:
                parts.append("\n" + json.dumps(output.get("data", {})) + "\n")
        parts.append("\n")
    return "".join(parts)


# ------------------------------------------------------------------ background processes
RUN_PROBE = """
import sys
from pathlib import Path
import nbformat
from nbclient import NotebookClient
path = Path(sys.argv[1])
nb = nbformat.read(path, as_version=4)
try:
    NotebookClient(nb, timeout=1800, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute()
finally:
    nbformat.write(nb, path)
"""

# nbgrader's time limit per cell, which the forked checks apply too
CELL_TIMEOUT_S = float(re.search(r"^TIMEOUT_S = (\d+)", (REPO / "nbgrader_config.py").read_text(),
                                 re.M).group(1))


def start(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, *args], cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def start_make_check(week: int) -> subprocess.Popen:
    """What ``make check WEEK=<week>`` runs, on the committed release, in the background."""
    return start("-m", "course.grading", "--week", str(week))


def start_probe(week: Week, forked: Mapping[str, Answer], root: Path) -> subprocess.Popen:
    """The solution run once in a kernel that forks at each exercise to check ``forked``
    (:mod:`forked_answers`), in the background; verdicts in ``root/verdicts``."""
    from forked_answers import probe_notebook

    by_exercise: dict[int, dict[str, dict[str, str]]] = defaultdict(dict)
    for name, answer in forked.items():
        by_exercise[answer.exercise][name] = answer.cells
    root.mkdir(parents=True, exist_ok=True)
    probe = root / week.notebook.name
    nbformat.write(probe_notebook(week, dict(by_exercise), root / "verdicts",
                                  cell_timeout_s=CELL_TIMEOUT_S), probe)
    return start("-c", RUN_PROBE, str(probe))


def grade_in_a_process(week: int, folders: dict[str, Path], repo: Path = REPO,
                       timeout_s: int | None = None) -> subprocess.Popen:
    job = json.dumps([week, str(repo), timeout_s, {k: str(v) for k, v in folders.items()}])
    return start("-c", GRADE_IN_A_PROCESS, job)


def finish(jobs: dict[str, subprocess.Popen], timeout_s: float = 600) -> dict:
    """Wait for background jobs; ``{name: CompletedProcess}``. Kills any left running."""
    done = {}
    try:
        for name, job in jobs.items():
            out, err = job.communicate(timeout=timeout_s)
            done[name] = subprocess.CompletedProcess(job.args, job.returncode, out, err)
    finally:
        for job in jobs.values():
            if job.poll() is None:
                job.kill()
    return done


def reports_of(done: subprocess.CompletedProcess) -> dict:
    line = next((ln for ln in done.stdout.splitlines() if ln.startswith("REPORTS ")), None)
    assert line, done.stderr[-3000:]
    return json.loads(line.removeprefix("REPORTS "))


def nbgrader_state_in_repo() -> dict[str, float | None]:
    names = ("gradebook.db", "submitted", "autograded", "feedback")
    return {n: (REPO / n).stat().st_mtime if (REPO / n).exists() else None for n in names}


# ------------------------------------------------------------------ which answers, where
def delegations(week: Week) -> dict[str, Answer]:
    """For every reference an exercise declares, an answer that hands the work to it: the
    solution's answer cell with one of its functions redefined to call the reference
    (matched by its parameters and, where several fit, its name). It must lose points.
    A reference no function of the answer cells fits gets none (see
    :func:`unmatched_references`)."""
    sources = {c.metadata.get("nbgrader", {}).get("grade_id"): c.source
               for c in cells(week.notebook)}
    made = {}
    for exercise in week.exercises:
        for reference in exercise.references:
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
    """References for which no automatic delegation could be made and no known wrong answer
    calls them (empty: every reference has a delegating wrong answer)."""
    made = {(a.exercise, a.name.rpartition("_delegates_to_")[2])
            for a in delegations(week).values()}
    known = answers(week)
    return [f"exercise {e.number}: {ref}" for e in week.exercises for ref in e.references
            if (e.number, ref.rpartition(".")[2]) not in made
            and not any(a.exercise == e.number and a.fails
                        and _imports(ref, "\n".join(a.cells.values()))
                        for a in known.values())]


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


# ------------------------------------------------------------------ one week's pipeline
@dataclass
class Grading:
    """What a week's module adds to its one grading run (``GRADING`` in ``test_weekN.py``):
    more submission folders for the nbgrader run, more background processes."""

    more_submissions: Callable[[Path], Mapping[str, Path]] | None = None
    more_jobs: Callable[[Path], Mapping[str, subprocess.Popen]] | None = None


@dataclass
class Pipeline:
    """What one week's grading run left (:func:`grade_week`)."""

    week: Week
    course: Path  # the kept nbgrader course folder
    reports: dict  # {submission: course.grading.autograde.Report}
    bundle_of: dict[str, str]  # {wrong-answer name: the submission that held it}
    jobs: dict[str, subprocess.CompletedProcess]  # "blank" (make check), "probe", more
    probed: Path  # the executed probe notebook
    forked: dict[str, dict] = field(default_factory=dict)  # {answer name: verdicts}

    @property
    def executed_solution(self) -> Path:
        return (self.course / "autograded" / "solution" / f"week{self.week.number}"
                / self.week.notebook.name)

    def forked_failures(self, name: str) -> dict[str, str]:
        """``{test grade_id: message}`` of the tests answer ``name`` failed in its forked
        check; every test of its exercise was run."""
        verdict = self.forked.get(name)
        assert verdict is not None, f"{name}: no forked check ran ({self.jobs['probe']})"
        assert verdict["ended"] == "finished", f"{name}: its forked check ended {verdict['ended']}"
        return {g: message for g, (passed, message) in verdict["tests"].items() if not passed}

    def messages_of(self, answer: Answer) -> list[str]:
        """What the tests ``answer`` must fail said (in its bundle, or its forked check)."""
        if answer.name not in self.bundle_of:
            return [m for g, m in self.forked_failures(answer.name).items()
                    if g in answer.fails]
        report = self.reports[self.bundle_of[answer.name]]
        return [t.message for t in report.failed() if t.grade_id in answer.fails]


def graded_by_nbgrader(week: Week, known: Mapping[str, Answer]) -> dict[str, Answer]:
    """The wrong answers nbgrader grades: the first ``bundled`` of each exercise (in name
    order), or all of them in a week without bundling."""
    wrongs = {n: a for n, a in known.items() if not a.right}
    if week.checks.bundled is None:
        return wrongs
    kept: dict[int, int] = defaultdict(int)
    graded_now = {}
    for name, wrong in wrongs.items():
        kept[wrong.exercise] += 1
        if kept[wrong.exercise] <= week.checks.bundled:
            graded_now[name] = wrong
    return graded_now


def forked_answers(week: Week, known: Mapping[str, Answer]) -> dict[str, Answer]:
    """The answers checked by forking: in a bundling week every known answer, and in every
    week each exercise's automatic delegations."""
    forked = dict(known) if week.checks.bundled is not None else {}
    return {**forked, **delegations(week)}


def grade_week(week: Week, root: Path, grading: Grading | None = None) -> Pipeline:
    """``make check WEEK=N`` on the untouched release (and ``grading.more_jobs``) in the
    background, with the forked checks; meanwhile ONE nbgrader run here grades the solution,
    the wrong answers nbgrader grades (in :func:`bundles`, or :func:`apart`) and
    ``grading.more_submissions``, keeping its course folder under ``root/course``."""
    from course.grading import autograde as grading_run

    grading = grading or Grading()
    known = answers(week)
    wrongs = graded_by_nbgrader(week, known)
    groups = apart(wrongs) if week.checks.cross_exercise else bundles(wrongs)
    folders, bundle_of = {}, {}
    for bundle, names in groups.items():
        edits: dict[str, str] = {}
        for name in names:
            assert not set(edits) & set(wrongs[name].cells), f"{bundle}: two answers share a cell"
            edits.update(wrongs[name].cells)
            bundle_of[name] = bundle
        folders[bundle] = submission(week.notebook, root / "wrong" / bundle, edits)
    before = nbgrader_state_in_repo()
    jobs = {"blank": start_make_check(week.number),
            **(grading.more_jobs(root) if grading.more_jobs else {}),
            "probe": start_probe(week, forked_answers(week, known), root / "probe")}
    more = grading.more_submissions(root) if grading.more_submissions else {}
    try:
        reports = grading_run.grade(week.number, {"solution": week.folder, **folders, **more},
                                    keep=root / "course")
    finally:
        done = finish(jobs, week.checks.timeout_s)
    assert nbgrader_state_in_repo() == before, "grading wrote nbgrader files into the repo"
    verdicts = root / "probe" / "verdicts"
    return Pipeline(week, root / "course", reports, bundle_of, done,
                    root / "probe" / week.notebook.name,
                    {p.stem: json.loads(p.read_text()) for p in sorted(verdicts.glob("*.json"))})


# ------------------------------------------------------------------ checks of the notebooks
def nbgrader_metadata_problems(week: Week) -> list[str]:
    """What is wrong with the source notebook's nbgrader metadata (empty: nothing): graded
    cells schema 3 with points, tests locked and answers open, unique grade ids."""
    problems = []
    for grade_id, meta in graded(week.notebook).items():
        if meta["schema_version"] != 3 or not meta["points"] > 0:
            problems.append(f"{grade_id}: not schema 3 or no points")
        if meta["locked"] == meta["solution"]:
            problems.append(f"{grade_id}: a test must be locked, an answer open")
    ids = [c.metadata["nbgrader"]["grade_id"] for c in cells(week.notebook)
           if "nbgrader" in c.metadata]
    if len(ids) != len(set(ids)):
        problems.append("grade ids must be unique")
    return problems


def release_leaks(week: Week, release: Path) -> list[str]:
    """What the release gives away or lacks (empty: nothing): solution and hidden-test
    markers, the declared secrets; the same graded cells as the source; every code answer
    cell blanked with ``raise NotImplementedError()``."""
    text = release.read_text()
    problems = [s for s in ["BEGIN SOLUTION", "BEGIN HIDDEN TESTS", *week.secrets] if s in text]
    if graded(release).keys() != graded(week.notebook).keys():
        problems.append("the release's graded cells differ from the source's")
    answer_cells = {g for e in week.exercises for g in e.answers}
    for cell in cells(release):
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if (grade_id in answer_cells) != ("raise NotImplementedError()" in cell.source):
            problems.append(f"{grade_id or cell.source[:40]}: blanked only if an answer cell")
    return problems


def sameish(message: str) -> str:
    """A test's message with what differs from run to run (ids, times) left out."""
    message = re.sub(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", "<id>",
                     message)
    message = re.sub(r"\b\d+\.py\b", "<cell>.py", message)  # a kernel's name for a cell
    return re.sub(r"\d+\.\d+ ?s\b", "<time>", message)


def assert_says_why(week: Week, name: str, failed: Mapping[str, str]) -> None:
    """Each failure says why: more than a bare ``AssertionError`` (except the week's
    ``bare`` test cells), and no hidden test code."""
    for grade_id, message in failed.items():
        assert message.strip(), f"{name}: {grade_id} failed without saying why"
        assert message.strip() != "AssertionError" or grade_id in week.checks.bare, (
            f"{name}: {grade_id} says only {message!r}")
        assert "BEGIN HIDDEN TESTS" not in message and "_problems" not in message, message


# ------------------------------------------------------------------ the collector
WEEK_MODULE = re.compile(r"test_week(\d+)\.py")


def week_number(module_name: str) -> int:
    return int(WEEK_MODULE.fullmatch(Path(module_name).name).group(1))


class WeekModule(pytest.Module):
    """``tests/test_weekN.py``: its own tests, then :class:`EveryWeek`'s for week N. Fails
    collection, naming the file, when the week's declaration is missing or wrong."""

    def collect(self):
        try:
            self.declared = load(week_number(self.path.name))
        except DeclarationError as error:
            raise self.CollectError(str(error)) from None
        yield from super().collect()
        yield WeekChecks.from_parent(self, name="EveryWeek")


class WeekChecks(pytest.Class):
    """:class:`EveryWeek`, less the tests that do not apply to this week (``applies``)."""

    def _getobj(self):
        return EveryWeek

    def collect(self):
        week = self.parent.declared
        for item in super().collect():
            applies = getattr(getattr(item, "function", None), "applies", None)
            if applies is None or applies(week):
                yield item


def applies(condition: Callable[[Week], bool]):
    """Mark an :class:`EveryWeek` test that only some weeks run."""
    def mark(function):
        function.applies = condition
        return function
    return mark


def parametrize_answers(metafunc) -> None:
    """``pytest_generate_tests`` for :class:`EveryWeek`: ``wrong``/``right``/``delegation``
    run once per such answer of the module's week."""
    wanted = [n for n in ("wrong", "right", "delegation") if n in metafunc.fixturenames]
    if not wanted:
        return
    week = load(week_number(metafunc.module.__file__))
    known = answers(week)
    names = {"wrong": [n for n, a in known.items() if not a.right],
             "right": [n for n, a in known.items() if a.right],
             "delegation": list(delegations(week))}[wanted[0]]
    metafunc.parametrize(wanted[0], names)


class EveryWeek:
    """What every declared week must show (the week's number: its module's name)."""

    @pytest.mark.parametrize("kind", ["solution", "release"])
    def test_committed_notebooks_have_no_outputs(self, declared, kind):
        path = declared.notebook if kind == "solution" else release_of(declared.number)
        assert code_cells_with_outputs(path) == [], "clear the outputs before committing"

    def test_the_notebooks_nbgrader_metadata_is_sound_and_references_exist(self, declared):
        from course.grading.declaration import reference_problems

        problems = nbgrader_metadata_problems(declared) + reference_problems(declared)
        assert problems == [], problems

    def test_the_release_hides_solutions_hidden_tests_and_model_answers(self, declared):
        problems = release_leaks(declared, release_of(declared.number))
        assert problems == [], problems

    def test_every_exercise_has_wrong_answers_and_every_reference_a_delegation(self, declared,
                                                                               tmp_path):
        known = answers(declared)
        count = defaultdict(int)
        for answer in known.values():
            count[answer.exercise] += not answer.right
            submission(declared.notebook, tmp_path / answer.name, answer.cells)
        short = {e.number: count[e.number] for e in declared.exercises
                 if count[e.number] < declared.checks.at_least}
        assert short == {}, f"exercises with fewer than {declared.checks.at_least} wrong answers"
        assert unmatched_references(declared) == []

    @applies(lambda week: not week.checks.cross_exercise)
    def test_no_exercise_is_graded_through_another_exercises_answer(self, declared):
        """What makes grading wrong answers in bundles (one per exercise) sound."""
        problems = answers_used_across_exercises(declared)
        assert problems == [], problems

    @applies(lambda week: week.checks.cross_exercise)
    def test_its_tests_do_read_other_exercises_answers(self, declared):
        """``cross_exercise`` is declared only where it is true (it turns bundling off)."""
        assert answers_used_across_exercises(declared) != []

    @pytest.mark.slow
    def test_the_committed_release_is_what_generate_assignment_makes(self, pipeline):
        number = pipeline.week.number
        fresh = pipeline.course / f"week{number}" / f"week{number}.ipynb"
        assert json.loads(fresh.read_text()) == json.loads(release_of(number).read_text()), (
            f"week{number}/ is out of date: run `make release` and commit week{number}/")

    @pytest.mark.slow
    def test_the_solution_runs_headless_without_errors_and_shows_the_demos(self, pipeline):
        executed = pipeline.executed_solution
        errors = errors_in(executed)
        assert errors == [], errors
        text = output_text(executed)
        missing = [shown for shown in pipeline.week.demos if shown not in text]
        assert missing == [], f"the executed solution does not show {missing}:\n{text[-6000:]}"

    @pytest.mark.slow
    def test_the_solution_gets_full_marks(self, pipeline):
        week, solution = pipeline.week, pipeline.reports["solution"]
        assert [t.grade_id for t in solution.failed()] == [], "\n".join(solution.lines())
        summary = f"week{week.number}: {week.total:g}/{week.total:g}"
        assert solution.summary() == solution.lines()[-1] == summary, solution.lines()[-1]
        assert [w[2] for w in solution.written] == [w.points for w in week.written]

    @pytest.mark.slow
    def test_make_check_on_the_untouched_release_prints_zero(self, pipeline):
        """What `make check WEEK=N` runs on a fresh clone."""
        week, done = pipeline.week, pipeline.jobs["blank"]
        assert done.returncode == 0, done.stderr[-2000:]
        assert done.stdout.strip().splitlines()[-1] == f"week{week.number}: 0/{week.total:g}"
        assert ("NotImplementedError: the exercise is not done yet (YOUR CODE HERE)"
                in done.stdout)
        # rows name their test, without the exercise's total; the written answers' rubric;
        # the time it took, not a promise
        rows = [line for line in done.stdout.splitlines() if line.startswith("  FAIL")]
        assert rows and all(" test of " in row and "points)" not in row for row in rows), rows
        assert f"grade them yourself: rubrics/week{week.number}.md" in done.stdout
        assert "graded in " in done.stdout and "half a minute" not in done.stdout

    @pytest.mark.slow
    def test_a_wrong_answer_loses_points_on_its_own_exercise(self, pipeline, wrong):
        answer = answers(pipeline.week)[wrong]
        if wrong in pipeline.bundle_of:
            failed = _failed_in_bundle(pipeline, answer)
        else:
            failed = _failed_forked(pipeline, answer)
        assert set(failed) == answer.fails, (
            f"{wrong}: failed {sorted(failed)}, expected {sorted(answer.fails)}")
        assert_says_why(pipeline.week, wrong, failed)
        if answer.says:
            assert any(answer.says in m for m in pipeline.messages_of(answer)), (
                f"{wrong}: no failed test says {answer.says!r}")

    @pytest.mark.slow
    @applies(lambda week: any(a.right for a in answers(week).values()))
    def test_a_right_answer_written_differently_gets_full_marks(self, pipeline, right):
        lost = _failed_forked(pipeline, answers(pipeline.week)[right])
        assert lost == {}, f"{right} is right, yet it lost points: {lost}"

    @pytest.mark.slow
    @applies(lambda week: bool(delegations(week)))
    def test_an_answer_that_calls_the_courses_reference_loses_points(self, pipeline,
                                                                     delegation):
        answer = delegations(pipeline.week)[delegation]
        failed = _failed_forked(pipeline, answer)
        assert failed, f"{delegation} ({answer.why}) lost nothing"
        assert_says_why(pipeline.week, delegation, failed)

    @pytest.mark.slow
    def test_wrong_answers_lose_nothing_outside_their_exercises(self, pipeline):
        known, found = answers(pipeline.week), {}
        for bundle in set(pipeline.bundle_of.values()):
            report = pipeline.reports[bundle]
            explained = set().union(*(known[n].fails for n, b in pipeline.bundle_of.items()
                                      if b == bundle))
            failed = {t.grade_id for t in report.failed()}
            lost = sum(t.points for t in report.tests if t.grade_id in failed)
            if (failed != explained or any(t.timed_out for t in report.tests)
                    or report.earned != pipeline.week.total - lost):
                found[bundle] = (sorted(failed), sorted(explained), report.earned)
            lines = "\n".join(report.lines())
            assert "BEGIN HIDDEN TESTS" not in lines and "_problems" not in lines, bundle
        assert found == {}, found

    @pytest.mark.slow
    def test_the_forked_checks_agree_with_nbgrader(self, pipeline):
        """Every answer both graded and forked fails the same tests of its exercise, saying
        the same thing. So does the solution's own answer to each forked exercise, which
        nbgrader gives full marks: no test fails in its child either. And the run the
        checks forked from is the solution's, with no error."""
        probe = pipeline.jobs["probe"]
        assert probe.returncode == 0, probe.stderr[-3000:]
        assert errors_in(pipeline.probed) == [], errors_in(pipeline.probed)
        assert [t.grade_id for t in pipeline.reports["solution"].failed()] == []
        known = answers(pipeline.week)
        forked = forked_answers(pipeline.week, known)
        for number in sorted({answer.exercise for answer in forked.values()}):
            assert _failed_forked(pipeline, Answer(f"solution-ex{number}", number, {},
                                                   frozenset())) == {}, number
        for name, bundle in pipeline.bundle_of.items():
            if name not in forked:
                continue
            own = set(pipeline.week.exercise(known[name].exercise).tests)
            graded_said = {t.grade_id: sameish(t.message)
                           for t in pipeline.reports[bundle].failed() if t.grade_id in own}
            forked_said = {g: sameish(m) for g, m in pipeline.forked_failures(name).items()}
            assert forked_said == graded_said, (name, forked_said, graded_said)


def _failed_forked(pipeline: Pipeline, answer: Answer) -> dict[str, str]:
    """The forked check of ``answer``: it ran exactly its exercise's tests; what failed."""
    ran = set(pipeline.forked.get(answer.name, {}).get("tests", {}))
    own = set(pipeline.week.exercise(answer.exercise).tests)
    assert ran == own, f"{answer.name}: the forked check ran {sorted(ran)}, not {sorted(own)}"
    return pipeline.forked_failures(answer.name)


def _failed_in_bundle(pipeline: Pipeline, answer: Answer) -> dict[str, str]:
    """In its submission: the tests ``answer`` failed beyond those its companions must
    fail; and it lost exactly those tests' points of its exercise."""
    known = answers(pipeline.week)
    bundle = pipeline.bundle_of[answer.name]
    report = pipeline.reports[bundle]
    others = set().union(*(known[n].fails for n, b in pipeline.bundle_of.items()
                           if b == bundle and n != answer.name))
    every_failed = {t.grade_id: t.message for t in report.failed()}
    failed = {g: m for g, m in every_failed.items() if g not in others}
    own = [t for t in report.tests if t.grade_id in pipeline.week.exercise(answer.exercise).tests]
    lost = sum(t.points for t in own if t.grade_id in every_failed)
    assert sum(t.earned for t in own) == sum(t.points for t in own) - lost, answer.name
    return failed
