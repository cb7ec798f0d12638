"""The week-test machinery every ``tests/test_weekN.py`` shares (weeks 1-7).

A week's test module declares its known-wrong answers as :class:`Wrong` (the cells a student
would write, the exercise they belong to, the tests they must fail), and may declare right
answers written differently from the solution as :class:`Right` (they must get full marks),
sets ``pytestmark =
NBGRADER_WARNINGS`` and adds :func:`week_suite`'s tests to its globals, then its own tests.
The suite's module-scoped ``pipeline`` fixture (:func:`grade_week`) runs ``make check
WEEK=N`` on the untouched release in a background process while this process grades, in
ONE nbgrader run (:func:`course.grading.autograde.grade`), the solution and every wrong
answer, keeping its course folder; the tests then read the reports, the regenerated
release and the executed solution.

Wrong answers travel in bundles (:func:`bundles`): one submission holds the K-th wrong
answer of every exercise, so a week executes its notebook a few times, not once per wrong
answer. That is sound because :func:`answers_used_across_exercises` proves no test reads a
name another exercise's answer defines, and each wrong answer must fail exactly its
declared tests while its bundle fails nothing else (a leak shows up as an undeclared
failure). A week whose tests do read other exercises' answers (week 5) groups its
submissions itself (``week_suite(groups=...)``).

All weeks but week 5 (``week_suite(bundled=1)``) grade only the first wrong answer of each
exercise with nbgrader, all in one bundle. Every wrong and right answer, that one included,
is also checked by :mod:`forked_answers`: one run of the solution forks its kernel before
each exercise, and each child runs one answer and that exercise's tests from exactly the
state a graded run has there. The suite requires the forked verdicts of the bundled answers
to match nbgrader's, test by test and message by message, on every run, and the solution's
own answers to pass every test in their children as they do in nbgrader's run.

Also here: helpers for throwaway courses (:func:`tiny_course`), grading in a separate
process (:func:`grade_in_a_process`), and reading notebooks and nbgrader metadata.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from collections import defaultdict
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest

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


def nbgrader_cell(source: str, **meta) -> nbformat.NotebookNode:
    """A code cell with nbgrader metadata (``grade=True, points=2, grade_id=...`` etc.)."""
    made = nbformat.v4.new_code_cell(source)
    made.metadata["nbgrader"] = {"schema_version": 3, "task": False, "locked": False,
                                 "grade": False, "solution": False, **meta}
    return made


def tiny_course(root: Path, week: int, cells: list) -> Path:
    """A throwaway course at ``root``: ``solutions/week<week>/week<week>.ipynb`` made of
    ``cells``, and the repository's ``nbgrader_config.py``. Returns ``root``."""
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": {
        "name": "python3", "display_name": "Python 3", "language": "python"}})
    nb.cells = cells
    (root / "solutions" / f"week{week}").mkdir(parents=True)
    nbformat.write(nb, root / "solutions" / f"week{week}" / f"week{week}.ipynb")
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


def exercises_and_test_kinds(path: Path) -> dict[str, set[bool]]:
    """``{"Exercise N": {visible?, hidden?}}`` from the test cells' first line
    (``# Exercise N, ...``) and their ``### BEGIN HIDDEN TESTS`` markers."""
    kinds: dict[str, set[bool]] = {}
    for cell in cells(path):
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("grade") and not meta.get("solution"):
            exercise = cell.source.split(",")[0].removeprefix("# ")
            kinds.setdefault(exercise, set()).add("### BEGIN HIDDEN TESTS" in cell.source)
    return kinds


def wrong_answer(source: Path, target: Path,
                 edits: Mapping[str, str | Callable[[str], str]]) -> Path:
    """A submission folder made from the solution notebook with some cells changed:
    ``{grade_id: new source, or a function of the old source}``. Every grade id must exist."""
    nb = nbformat.read(source, as_version=4)
    found = set()
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in edits:
            edit = edits[grade_id]
            new = edit(cell.source) if callable(edit) else edit
            assert new != cell.source, f"the wrong answer for {grade_id} changes nothing"
            cell.source = new
            found.add(grade_id)
    assert found == set(edits), f"no such cells: {set(edits) - found}"
    target.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, target / source.name)
    return target


def resolved_edits(source: Path, edits: Edits) -> dict[str, str]:
    """``edits`` with every function of the old source applied: ``{grade_id: new source}``."""
    old = {c.metadata.get("nbgrader", {}).get("grade_id"): c.source for c in cells(source)}
    return {g: e(old[g]) if callable(e) else e for g, e in edits.items()}


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


def start_probe(week: int, answers: Mapping[str, Wrong | Right], root: Path) -> subprocess.Popen:
    """The solution run once in a kernel that forks at each exercise to check ``answers``
    (:mod:`forked_answers`), in the background; verdicts in ``root/verdicts``."""
    from forked_answers import probe_notebook

    source = source_of(week)
    by_exercise: dict[int, dict[str, dict[str, str]]] = defaultdict(dict)
    for name, answer in answers.items():
        by_exercise[answer.exercise][name] = resolved_edits(source, answer.edits)
    root.mkdir(parents=True, exist_ok=True)
    probe = root / source.name
    nbformat.write(probe_notebook(source, dict(by_exercise), root / "verdicts",
                                  cell_timeout_s=CELL_TIMEOUT_S), probe)
    return start("-c", RUN_PROBE, str(probe))


def start(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, *args], cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def start_make_check(week: int) -> subprocess.Popen:
    """What ``make check WEEK=<week>`` runs, on the committed release, in the background."""
    return start("-m", "course.grading", "--week", str(week))


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


# ------------------------------------------------------------------- known-wrong answers
NBGRADER_WARNINGS = [  # ``pytestmark`` of a week's module: from nbgrader's own code (the
    # gradebook, re-added cells), harmless
    pytest.mark.filterwarnings("ignore:Object of type <Submitted:sqlalchemy.exc.SAWarning"),
    pytest.mark.filterwarnings("ignore::nbformat.warnings.MissingIDFieldWarning"),
]

Edits = Mapping[str, str | Callable[[str], str]]  # {grade_id: new source, or old -> new}


@dataclass(frozen=True)
class Wrong:
    """A realistic wrong answer: ``edits`` ({grade_id: new cell source, or a function of the
    old one}) to answer cells of exercise ``exercise``; it must fail exactly the test cells
    ``fails``, all of them tests of that exercise."""

    exercise: int
    edits: Edits
    fails: frozenset[str]

    def __post_init__(self):
        object.__setattr__(self, "fails", frozenset(self.fails))


@dataclass(frozen=True)
class Right:
    """A right answer written differently from the solution (another key form, another way
    of settling): ``edits`` to answer cells of exercise ``exercise``; its submission must get
    full marks: checked by forking (:mod:`forked_answers`), so only in a week with
    ``week_suite(bundled=...)``; all its exercise's tests must pass."""

    exercise: int
    edits: Edits


def replacing(old: str, new: str) -> Callable[[str], str]:
    """An edit for :class:`Wrong`: ``old`` (which must be in the cell) becomes ``new``."""
    def edit(source: str) -> str:
        assert old in source, f"the solution no longer contains {old!r}"
        return source.replace(old, new)
    return edit


def bundles(wrongs: Mapping[str, Wrong]) -> dict[str, list[str]]:
    """``{bundle: [wrong-answer names]}``: bundle ``wrongK`` holds the K-th wrong answer of
    every exercise, so a week with three wrong answers per exercise executes its notebook
    four times (solution + three bundles), not thirteen. Sound only when no test reads
    another exercise's answers (:func:`answers_used_across_exercises`), and each wrong answer
    must still fail exactly its own tests (a leak shows up as an undeclared failure)."""
    per_exercise: dict[int, list[str]] = defaultdict(list)
    for name, wrong in wrongs.items():
        per_exercise[wrong.exercise].append(name)
    rounds = max(len(names) for names in per_exercise.values())
    return {f"wrong{k + 1}": [names[k] for names in per_exercise.values() if k < len(names)]
            for k in range(rounds)}


def _cells_by_exercise(source: Path) -> list[tuple[int, str, nbformat.NotebookNode]]:
    """``[(exercise, "answer" | "test", cell)]`` for code answer and test cells. A test cell's
    exercise is its first line's ``# Exercise N,``; an answer cell belongs to the exercise of
    the first test cell after it."""
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


def exercise_of_tests(source: Path) -> dict[str, int]:
    """``{grade_id: exercise number}`` of every autograded test cell."""
    return {c.metadata["nbgrader"]["grade_id"]: n for n, kind, c in _cells_by_exercise(source)
            if kind == "test"}


def exercise_of_answers(source: Path) -> dict[str, int]:
    """``{grade_id: exercise number}`` of every code answer cell."""
    return {c.metadata["nbgrader"]["grade_id"]: n for n, kind, c in _cells_by_exercise(source)
            if kind == "answer"}


def answers_used_across_exercises(source: Path) -> list[str]:
    """``"<test id> (exercise N) reads <name> from <answer id>"`` for every test cell that
    reads a name an answer cell of another exercise defines at its top level (a function, a
    class, an assigned name). Empty: bundling wrong answers across exercises is sound."""
    defined: dict[str, tuple[int, str]] = {}
    tests = []
    for number, kind, cell in _cells_by_exercise(source):
        grade_id = cell.metadata["nbgrader"]["grade_id"]
        if kind == "test":
            tests.append((number, grade_id, cell.source))
            continue
        for node in ast.parse(cell.source).body:
            if isinstance(node, ast.FunctionDef | ast.ClassDef):
                defined[node.name] = (number, grade_id)
            elif isinstance(node, ast.Assign | ast.AnnAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                defined.update({t.id: (number, grade_id) for t in targets
                                if isinstance(t, ast.Name)})
    problems = []
    for number, grade_id, source_code in tests:
        read = {n.id for n in ast.walk(ast.parse(source_code)) if isinstance(n, ast.Name)}
        problems += [f"{grade_id} (exercise {number}) reads {name} from {defined[name][1]}"
                     for name in sorted(read)
                     if name in defined and defined[name][0] != number]
    return problems


def wrong_answer_problems(source: Path, wrongs: Mapping[str, Wrong], at_least: int) -> list[str]:
    """What is wrong with a week's table of wrong answers (empty: nothing): each must edit
    real answer cells of its own exercise and expect failures among that exercise's tests
    only, and every exercise needs at least ``at_least`` of them."""
    tests, answers = exercise_of_tests(source), exercise_of_answers(source)
    problems, count = [], defaultdict(int)
    for name, wrong in wrongs.items():
        count[wrong.exercise] += 1
        if not wrong.fails or {tests.get(g) for g in wrong.fails} != {wrong.exercise}:
            problems.append(f"{name}: must fail {sorted(wrong.fails)}, not all tests of "
                            f"exercise {wrong.exercise}")
        if not wrong.edits or {answers.get(g) for g in wrong.edits} != {wrong.exercise}:
            problems.append(f"{name}: edits {sorted(wrong.edits)}, not all answer cells of "
                            f"exercise {wrong.exercise}")
    short = {n: count[n] for n in sorted(set(tests.values())) if count[n] < at_least}
    if short:
        problems.append(f"exercises with fewer than {at_least} wrong answers: {short}")
    return problems


def right_answer_problems(source: Path, rights: Mapping[str, Right]) -> list[str]:
    """What is wrong with a week's table of right answers (empty: nothing): each must edit
    real answer cells of its own exercise only."""
    answers = exercise_of_answers(source)
    return [f"{name}: edits {sorted(right.edits)}, not all answer cells of exercise "
            f"{right.exercise}" for name, right in rights.items()
            if not right.edits or {answers.get(g) for g in right.edits} != {right.exercise}]


# ------------------------------------------------------------------- one week's pipeline
def _submissions(source: Path, root: Path, answers: Mapping[str, Wrong | Right],
                 groups: Mapping[str, list[str]]) -> tuple[dict[str, Path], dict[str, str]]:
    """One submission folder per group (the solution with its answers' edits):
    ``({submission: folder}, {answer name: submission})``."""
    folders, bundle_of = {}, {}
    for bundle, names in groups.items():
        edits: dict = {}
        for name in names:
            clash = set(edits) & set(answers[name].edits)
            assert not clash, f"two answers of {bundle} edit the same cells: {clash}"
            edits.update(answers[name].edits)
            bundle_of[name] = bundle
        folders[bundle] = wrong_answer(source, root / bundle, edits)
    assert bundle_of.keys() == answers.keys(), "every answer is graded exactly once"
    return folders, bundle_of


def grade_week(week: int, wrongs: Mapping[str, Wrong], root: Path, *,
               groups: Mapping[str, list[str]] | None = None,
               more_submissions: Mapping[str, Path] | None = None,
               more_jobs: Mapping[str, subprocess.Popen] | None = None,
               forked: Mapping[str, Wrong | Right] | None = None,
               timeout_s: float = 600) -> dict:
    """``make check WEEK=<week>`` on the untouched release (and ``more_jobs``) in the
    background, while ONE nbgrader run here grades the solution, every wrong answer (in
    ``groups``, ``{submission: [wrong-answer names]}``, by default :func:`bundles`) and
    ``more_submissions``, keeping its course folder under ``root/course``.

    Returns ``{"course", "reports": {submission: Report}, "bundle_of": {wrong-answer name:
    submission}, "blank": CompletedProcess, **more_jobs' CompletedProcess}``.

    ``forked``: answers checked by forking one run of the solution (:func:`start_probe`),
    in the background too; then also ``"probe"`` (its CompletedProcess), ``"probed"`` (the
    executed probe notebook) and ``"forked"`` (``{answer name: verdicts}``)."""
    from course.grading import autograde as grading

    source = source_of(week)
    folders, bundle_of = _submissions(source, root / "wrong", wrongs, groups or bundles(wrongs))
    before = nbgrader_state_in_repo()
    jobs = {"blank": start_make_check(week), **(more_jobs or {})}
    if forked:
        jobs["probe"] = start_probe(week, forked, root / "probe")
    try:
        reports = grading.grade(week, {"solution": source.parent, **folders,
                                       **(more_submissions or {})}, keep=root / "course")
    finally:
        done = finish(jobs, timeout_s)
    assert nbgrader_state_in_repo() == before, "grading wrote nbgrader files into the repo"
    verdicts = root / "probe" / "verdicts"
    return {"course": root / "course", "reports": reports, "bundle_of": bundle_of, **done,
            "probed": root / "probe" / source.name,
            "forked": {path.stem: json.loads(path.read_text())
                       for path in sorted(verdicts.glob("*.json"))}}


def source_of(week: int) -> Path:
    return REPO / "solutions" / f"week{week}" / f"week{week}.ipynb"


def release_of(week: int) -> Path:
    return REPO / f"week{week}" / f"week{week}.ipynb"


def executed_solution(pipeline: dict, week: int) -> Path:
    return pipeline["course"] / "autograded" / "solution" / f"week{week}" / f"week{week}.ipynb"


# ------------------------------------------------------------- what every week checks
def notebook_shape_problems(source: Path, exercises: int, total: float,
                            written: list[float]) -> list[str]:
    """What is wrong with a source notebook's nbgrader layout (empty: nothing): exercises
    1..``exercises`` each with a visible and a hidden test; graded cells schema 3 with
    points, tests locked and answers open; unique grade ids; ``total`` autograded points;
    written answers in markdown cells worth ``written``."""
    problems = []
    kinds = exercises_and_test_kinds(source)
    if sorted(kinds) != [f"Exercise {n}" for n in range(1, exercises + 1)]:
        problems.append(f"exercises with tests: {sorted(kinds)}")
    problems += [f"{ex} lacks a visible or a hidden test" for ex, k in kinds.items()
                 if k != {True, False}]
    for grade_id, meta in graded(source).items():
        if meta["schema_version"] != 3 or not meta["points"] > 0:
            problems.append(f"{grade_id}: not schema 3 or no points")
        if meta["locked"] == meta["solution"]:
            problems.append(f"{grade_id}: a test must be locked, an answer open")
    ids = [c.metadata["nbgrader"]["grade_id"] for c in cells(source) if "nbgrader" in c.metadata]
    if len(ids) != len(set(ids)):
        problems.append("grade ids must be unique")
    if autograded_points(source) != total:
        problems.append(f"{autograded_points(source)} autograded points, not {total}")
    manual = [(c.cell_type, c.metadata["nbgrader"]["points"]) for c in cells(source)
              if c.metadata.get("nbgrader", {}).get("grade") and c.metadata["nbgrader"]["solution"]]
    if manual != [("markdown", p) for p in written]:
        problems.append(f"written answers: {manual}")
    return problems


def release_leaks(source: Path, release: Path, secrets: list[str]) -> list[str]:
    """What the release gives away or lacks (empty: nothing): solution and hidden-test
    markers, ``secrets``; the same graded cells as the source; every code answer cell
    blanked with ``raise NotImplementedError()``."""
    text = release.read_text()
    problems = [s for s in ["BEGIN SOLUTION", "BEGIN HIDDEN TESTS", *secrets] if s in text]
    if graded(release).keys() != graded(source).keys():
        problems.append("the release's graded cells differ from the source's")
    answers = set(exercise_of_answers(source))
    for cell in cells(release):
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if (grade_id in answers) != ("raise NotImplementedError()" in cell.source):
            problems.append(f"{grade_id or cell.source[:40]}: blanked only if an answer cell")
    return problems


def assert_wrong_answer_fails_its_tests(pipeline: dict, source: Path, name: str,
                                        wrongs: Mapping[str, Wrong],
                                        bare: Collection[str] = ()) -> None:
    """In its submission, the wrong answer ``name`` fails exactly its declared tests (beyond
    those its companions must fail), loses exactly those tests' points of its exercise, and
    each failure says why (more than a bare ``AssertionError``, except the test cells in
    ``bare``) without showing hidden test code."""
    wrong, bundle = wrongs[name], pipeline["bundle_of"][name]
    report = pipeline["reports"][bundle]
    others = set().union(*(wrongs[n].fails for n, b in pipeline["bundle_of"].items()
                           if b == bundle and n != name))
    failed = {t.grade_id: t for t in report.failed()}
    assert set(failed) - others == wrong.fails, (
        f"{name}: failed {sorted(set(failed) - others)}, expected {sorted(wrong.fails)}")
    exercise = exercise_of_tests(source)
    own = [t for t in report.tests if exercise[t.grade_id] == wrong.exercise]
    lost = sum(t.points for t in own if t.grade_id in failed)
    assert sum(t.earned for t in own) == sum(t.points for t in own) - lost, name
    for grade_id in wrong.fails:
        message = failed[grade_id].message.strip()
        assert message, f"{name}: {grade_id} failed without saying why"
        assert message != "AssertionError" or grade_id in bare, (
            f"{name}: {grade_id} says only {message!r}")
        assert "BEGIN HIDDEN TESTS" not in message and "_problems" not in message, message


def forked_failures(pipeline: dict, name: str) -> dict[str, str]:
    """``{test grade_id: message}`` of the tests answer ``name`` failed in its forked check
    (:mod:`forked_answers`); every test of its exercise was run."""
    verdict = pipeline["forked"].get(name)
    assert verdict is not None, f"{name}: no forked check ran (the probe: {pipeline['probe']})"
    assert verdict["ended"] == "finished", f"{name}: its forked check ended {verdict['ended']}"
    return {g: message for g, (passed, message) in verdict["tests"].items() if not passed}


def _sameish(message: str) -> str:
    """A test's message with what differs from run to run (ids, times) left out."""
    message = re.sub(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", "<id>",
                     message)
    message = re.sub(r"\b\d+\.py\b", "<cell>.py", message)  # a kernel's name for a cell
    return re.sub(r"\d+\.\d+ ?s\b", "<time>", message)


def assert_forked_answer_fails_its_tests(pipeline: dict, source: Path, name: str,
                                         wrongs: Mapping[str, Wrong],
                                         bare: Collection[str] = ()) -> None:
    """Checked by forking the solution's run: the wrong answer ``name`` fails exactly its
    declared tests of its exercise, and each failure says why, as in
    :func:`assert_wrong_answer_fails_its_tests`."""
    wrong = wrongs[name]
    ran = set(pipeline["forked"][name]["tests"])
    own = {g for g, n in exercise_of_tests(source).items() if n == wrong.exercise}
    assert ran == own, f"{name}: the forked check ran {sorted(ran)}, not {sorted(own)}"
    failed = forked_failures(pipeline, name)
    assert set(failed) == wrong.fails, (
        f"{name}: failed {sorted(failed)}, expected {sorted(wrong.fails)}")
    for grade_id, message in failed.items():
        assert message.strip(), f"{name}: {grade_id} failed without saying why"
        assert message.strip() != "AssertionError" or grade_id in bare, (
            f"{name}: {grade_id} says only {message!r}")
        assert "BEGIN HIDDEN TESTS" not in message and "_problems" not in message, message


def unexplained_failures(pipeline: dict, wrongs: Mapping[str, Wrong], total: float) -> dict:
    """``{submission: (failed, explained)}`` wherever a wrong answers' submission failed
    other tests than its wrong answers explain, lost other points, or ran out of time."""
    found = {}
    for bundle in set(pipeline["bundle_of"].values()):
        report = pipeline["reports"][bundle]
        explained = set().union(*(wrongs[n].fails for n, b in pipeline["bundle_of"].items()
                                  if b == bundle))
        failed = {t.grade_id for t in report.failed()}
        lost = sum(t.points for t in report.tests if t.grade_id in failed)
        if (failed != explained or any(t.timed_out for t in report.tests)
                or report.earned != total - lost):
            found[bundle] = (sorted(failed), sorted(explained), report.earned)
    return found


def messages_of(pipeline: dict, name: str, wrongs: Mapping[str, Wrong]) -> list[str]:
    """What the tests wrong answer ``name`` must fail said in its submission (or in its
    forked check, when it was not bundled)."""
    if name not in pipeline["bundle_of"]:
        return [m for g, m in forked_failures(pipeline, name).items() if g in wrongs[name].fails]
    report = pipeline["reports"][pipeline["bundle_of"][name]]
    return [t.message for t in report.failed() if t.grade_id in wrongs[name].fails]


def week_suite(*, week: int, exercises: int, total: float, written: list[float],
               wrongs: Mapping[str, Wrong], demos: list[str], said: Mapping[str, str],
               secrets: list[str], at_least: int = 2, bare: Collection[str] = (),
               rights: Mapping[str, Right] | None = None,
               groups: Callable[[], Mapping[str, list[str]]] | None = None,
               more_submissions: Callable[[Path], Mapping[str, Path]] | None = None,
               more_jobs: Callable[[Path], Mapping[str, subprocess.Popen]] | None = None,
               bundled: int | None = None,
               timeout_s: float = 600) -> dict:
    """The tests every graded week runs, for ``globals().update(...)`` in its test module
    (which adds its own tests, using the ``pipeline`` fixture and the paths from
    :func:`source_of` and :func:`release_of`).

    ``exercises``, ``total``, ``written``: the notebook's shape (see
    :func:`notebook_shape_problems`); ``wrongs``: ``{name: Wrong}``, at least ``at_least``
    per exercise; ``demos``: text the executed solution must show; ``said``: ``{wrong-answer
    name: words one of its failed tests' messages must contain}``; ``secrets``: text the
    release must not contain; ``bare``: test cells whose failure may say no more than
    ``AssertionError`` (a known gap in the notebook); ``rights``: ``{name: Right}``, right
    answers written differently from the solution, each of which must get full marks (checked
    by forking, so they need ``bundled``).

    ``groups`` (for a week whose tests read other exercises' answers): makes the
    submissions instead of :func:`bundles`, and the bundling soundness test is left out.
    ``more_submissions(root)``/``more_jobs(root)``: more folders for the one nbgrader run,
    more background processes (see :func:`grade_week`).

    ``bundled``: only the first ``bundled`` wrong answers of each exercise are graded by
    nbgrader (in bundles); every wrong and right answer is checked by forking one run of
    the solution (:mod:`forked_answers`), and for the bundled ones both must agree."""
    source, release = source_of(week), release_of(week)
    graded_wrongs = wrongs
    if bundled is not None:
        kept: dict[int, int] = defaultdict(int)
        graded_wrongs = {}
        for name, wrong in wrongs.items():
            kept[wrong.exercise] += 1
            if kept[wrong.exercise] <= bundled:
                graded_wrongs[name] = wrong
    assert not rights or bundled is not None, "right answers are checked by forking: bundled="
    assert not set(wrongs) & set(rights or {}), "a wrong and a right answer share a name"
    forked = {**wrongs, **(rights or {})} if bundled is not None else None

    @pytest.mark.parametrize("path", [source, release], ids=["solution", "release"])
    def test_committed_notebooks_have_no_outputs(path):
        assert code_cells_with_outputs(path) == [], "clear the outputs before committing"

    def test_every_exercise_has_visible_and_hidden_tests_and_the_points_add_up():
        problems = notebook_shape_problems(source, exercises, total, written)
        assert problems == [], problems

    def test_the_release_hides_solutions_hidden_tests_and_model_answers():
        problems = release_leaks(source, release, secrets)
        assert problems == [], problems

    def test_every_exercise_has_wrong_answers_that_target_its_own_tests(tmp_path):
        problems = wrong_answer_problems(source, wrongs, at_least)
        assert problems == [], problems
        for name, wrong in wrongs.items():  # asserts each edit changes a real cell
            wrong_answer(source, tmp_path / name, wrong.edits)
        problems = right_answer_problems(source, rights or {})
        assert problems == [], problems
        for name, right in (rights or {}).items():
            wrong_answer(source, tmp_path / name, right.edits)

    def test_no_exercise_is_graded_through_another_exercises_answer():
        """What makes grading wrong answers in bundles (one per exercise) sound."""
        problems = answers_used_across_exercises(source)
        assert problems == [], problems

    @pytest.fixture(scope="module")
    def pipeline(tmp_path_factory):
        root = tmp_path_factory.mktemp(f"week{week}-grading")
        return grade_week(week, graded_wrongs, root, groups=groups() if groups else None,
                          forked=forked,
                          more_submissions=more_submissions(root) if more_submissions else None,
                          more_jobs=more_jobs(root) if more_jobs else None, timeout_s=timeout_s)

    @pytest.mark.slow
    def test_the_committed_release_is_what_generate_assignment_makes(pipeline):
        fresh = pipeline["course"] / f"week{week}" / f"week{week}.ipynb"
        assert json.loads(fresh.read_text()) == json.loads(release.read_text()), (
            f"week{week}/ is out of date: run `make release` and commit week{week}/")

    @pytest.mark.slow
    def test_the_solution_runs_headless_without_errors_and_shows_the_demos(pipeline):
        executed = executed_solution(pipeline, week)
        errors = errors_in(executed)
        assert errors == [], errors
        text = output_text(executed)
        missing = [shown for shown in demos if shown not in text]
        assert missing == [], f"the executed solution does not show {missing}:\n{text[-6000:]}"

    @pytest.mark.slow
    def test_the_solution_gets_full_marks(pipeline):
        solution = pipeline["reports"]["solution"]
        assert [t.grade_id for t in solution.failed()] == [], "\n".join(solution.lines())
        summary = f"week{week}: {total:g}/{total:g}"
        assert solution.summary() == solution.lines()[-1] == summary, solution.lines()[-1]
        assert [w[2] for w in solution.written] == written, solution.written

    @pytest.mark.slow
    def test_make_check_on_the_untouched_release_prints_zero(pipeline):
        """What `make check WEEK=N` runs on a fresh clone."""
        done = pipeline["blank"]
        assert done.returncode == 0, done.stderr[-2000:]
        assert done.stdout.strip().splitlines()[-1] == f"week{week}: 0/{total:g}"
        assert ("NotImplementedError: the exercise is not done yet (YOUR CODE HERE)"
                in done.stdout)
        # rows name their test, without the exercise's total; the written answers' rubric;
        # the time it took, not a promise
        rows = [line for line in done.stdout.splitlines() if line.startswith("  FAIL")]
        assert rows and all(" test of " in row and "points)" not in row for row in rows), rows
        assert f"grade them yourself: rubrics/week{week}.md" in done.stdout
        assert "graded in " in done.stdout and "half a minute" not in done.stdout

    @pytest.mark.slow
    @pytest.mark.parametrize("name", list(wrongs))
    def test_a_wrong_answer_loses_points_on_its_own_exercise(pipeline, name):
        if name in pipeline["bundle_of"]:
            assert_wrong_answer_fails_its_tests(pipeline, source, name, wrongs, bare)
        else:
            assert_forked_answer_fails_its_tests(pipeline, source, name, wrongs, bare)

    @pytest.mark.slow
    @pytest.mark.parametrize("name", list(rights or {}))
    def test_a_right_answer_written_differently_gets_full_marks(pipeline, name):
        own = {g for g, n in exercise_of_tests(source).items() if n == rights[name].exercise}
        assert set(pipeline["forked"][name]["tests"]) == own, pipeline["forked"][name]
        lost = forked_failures(pipeline, name)
        assert lost == {}, f"{name} is right, yet it lost points: {lost}"

    @pytest.mark.slow
    def test_wrong_answers_lose_nothing_outside_their_exercises(pipeline):
        unexplained = unexplained_failures(pipeline, wrongs, total)
        assert unexplained == {}, unexplained

    @pytest.mark.slow
    def test_hidden_test_messages_say_what_is_wrong(pipeline):
        unsaid = [(name, words) for name, words in said.items()
                  if not any(words in message for message in messages_of(pipeline, name, wrongs))]
        assert unsaid == [], unsaid
        for bundle in set(pipeline["bundle_of"].values()):
            lines = "\n".join(pipeline["reports"][bundle].lines())
            assert "BEGIN HIDDEN TESTS" not in lines and "_problems" not in lines, bundle

    @pytest.mark.slow
    def test_the_forked_checks_agree_with_nbgrader(pipeline):
        """Every bundled wrong answer is checked both ways: the same tests of its exercise
        fail, saying the same thing. So is the solution's own answer to each exercise, which
        nbgrader gives full marks: no test fails in its child either. And the run the checks
        forked from is the solution's, with no error."""
        assert pipeline["probe"].returncode == 0, pipeline["probe"].stderr[-3000:]
        assert errors_in(pipeline["probed"]) == [], errors_in(pipeline["probed"])
        exercise = exercise_of_tests(source)
        assert [t.grade_id for t in pipeline["reports"]["solution"].failed()] == []
        for number in sorted({answer.exercise for answer in forked.values()}):
            name = f"solution-ex{number}"
            ran = set(pipeline["forked"][name]["tests"])
            assert ran == {g for g, n in exercise.items() if n == number}, (name, ran)
            assert forked_failures(pipeline, name) == {}, name
        for name, bundle in pipeline["bundle_of"].items():
            report = pipeline["reports"][bundle]
            graded = {t.grade_id: t.message for t in report.failed()
                      if exercise[t.grade_id] == wrongs[name].exercise}
            forked_said = {g: _sameish(m) for g, m in forked_failures(pipeline, name).items()}
            assert forked_said == {g: _sameish(m) for g, m in graded.items()}, (
                name, forked_failures(pipeline, name), graded)

    tests = {name: value for name, value in locals().items()
             if name.startswith("test_") or name == "pipeline"}
    if groups:
        del tests["test_no_exercise_is_graded_through_another_exercises_answer"]
    if not rights:
        del tests["test_a_right_answer_written_differently_gets_full_marks"]
    if not forked:
        del tests["test_the_forked_checks_agree_with_nbgrader"]
    return tests
