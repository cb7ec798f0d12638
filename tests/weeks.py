"""What every week's notebook tests share: read the nbgrader metadata, build wrong answers,
grade in a background process, and check nbgrader left nothing in the repository.

A week's test module (``tests/test_weekN.py``) follows week 5's pattern: one module-scoped
``pipeline`` fixture runs ``make check WEEK=N`` on the untouched release in a background
process while this process grades the solution and every known-wrong answer in ONE
nbgrader run (:func:`course.grading.autograde.grade`), keeping its course folder; the
tests then read the reports, the regenerated release and the executed solution.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

import nbformat

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


# ------------------------------------------------- wrong answers, several per submission
def nbgrader_warnings():
    """``pytestmark`` for a week's module: warnings from nbgrader's own code (the gradebook,
    re-added cells), which are harmless."""
    import pytest

    return [pytest.mark.filterwarnings("ignore:Object of type <Submitted:sqlalchemy.exc.SAWarning"),
            pytest.mark.filterwarnings("ignore::nbformat.warnings.MissingIDFieldWarning")]


def replacing(old: str, new: str) -> Callable[[str], str]:
    """An edit for :func:`wrong_answer`: ``old`` (which must be in the cell) becomes ``new``."""
    def edit(source: str) -> str:
        assert old in source, f"the solution no longer contains {old!r}"
        return source.replace(old, new)
    return edit


Edits = Mapping[str, str | Callable[[str], str]]  # {grade_id: new source, or old -> new}


def combine_wrong_answers(source: Path, root: Path, wrongs: Mapping[tuple[str, str], Edits],
                          ) -> tuple[dict[str, Path], dict[tuple[str, str], str]]:
    """Pack wrong answers ``{(exercise, name): edits}`` into few submissions: the i-th wrong
    answer of every exercise goes into submission ``wrong-i``. Sound only when no exercise's
    tests use another exercise's answers (:func:`answers_used_across_exercises` checks it).

    Returns ``({student: folder}, {(exercise, name): student})``.
    """
    combos: dict[str, dict[str, str | Callable[[str], str]]] = {}
    where: dict[tuple[str, str], str] = {}
    seen: dict[str, int] = {}
    for (exercise, name), edits in wrongs.items():
        index = seen.get(exercise, 0)
        seen[exercise] = index + 1
        student = f"wrong-{index + 1}"
        clash = set(edits) & set(combos.get(student, {}))
        assert not clash, f"two wrong answers of {student} edit the same cells: {clash}"
        combos.setdefault(student, {}).update(edits)
        where[(exercise, name)] = student
    folders = {student: wrong_answer(source, root / student, edits)
               for student, edits in combos.items()}
    return folders, where


def answers_used_across_exercises(path: Path) -> list[str]:
    """``"<test id> uses <name> from <answer id>"`` for every test cell of exercise N (grade id
    ``exN_...``) that reads a name an answer cell of another exercise defines."""
    import ast

    def exercise_of(grade_id: str) -> str:
        return grade_id.split("_")[0]

    defined: dict[str, str] = {}
    tests: list[tuple[str, str]] = []
    for cell in cells(path):
        meta = cell.metadata.get("nbgrader", {})
        grade_id = meta.get("grade_id", "")
        if cell.cell_type != "code" or not grade_id.startswith("ex"):
            continue
        if meta.get("solution"):
            for node in ast.parse(cell.source).body:
                if isinstance(node, ast.FunctionDef | ast.ClassDef):
                    defined[node.name] = grade_id
                elif isinstance(node, ast.Assign):
                    defined.update({t.id: grade_id for t in node.targets
                                    if isinstance(t, ast.Name)})
        elif meta.get("grade"):
            tests.append((grade_id, cell.source))
    problems = []
    for grade_id, source in tests:
        used = {n.id for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Name)}
        problems += [f"{grade_id} uses {name} from {defined[name]}" for name in sorted(used)
                     if name in defined and exercise_of(defined[name]) != exercise_of(grade_id)]
    return problems


# ------------------------------------- one week's pipeline and what every week checks in it
def grade_week_with_wrong_answers(week: int, source: Path, wrongs, root: Path) -> dict:
    """``make check WEEK=<week>`` on the untouched release in the background, while ONE
    nbgrader run here grades the solution and every wrong answer (packed with
    :func:`combine_wrong_answers`), keeping its course folder under ``root/course``."""
    from course.grading import autograde as grading

    folders, where = combine_wrong_answers(source, root / "wrong", wrongs)
    before = nbgrader_state_in_repo()
    jobs = {"blank": start_make_check(week)}
    try:
        reports = grading.grade(week, {"solution": source.parent, **folders},
                                keep=root / "course")
    finally:
        done = finish(jobs)
    assert nbgrader_state_in_repo() == before, "grading wrote nbgrader files into the repo"
    return {"course": root / "course", "reports": reports, "where": where, **done}


def notebook_shape_problems(source: Path, exercises: int, total: float,
                            written: int = 3) -> list[str]:
    """What is wrong with a source notebook's nbgrader layout (empty: nothing)."""
    problems = []
    kinds = exercises_and_test_kinds(source)
    if sorted(kinds) != [f"Exercise {n}" for n in range(1, exercises + 1)]:
        problems.append(f"exercises with tests: {sorted(kinds)}")
    problems += [f"{ex} lacks a visible or a hidden test" for ex, k in kinds.items()
                 if k != {True, False}]
    points = graded(source)
    problems += [f"{gid}: not locked or not schema 3" for gid, g in points.items()
                 if not g["solution"] and not (g["locked"] and g["schema_version"] == 3)]
    if autograded_points(source) != total:
        problems.append(f"{autograded_points(source)} autograded points, not {total}")
    manual = [(c.cell_type, c.metadata["nbgrader"]["points"]) for c in cells(source)
              if c.metadata.get("nbgrader", {}).get("grade") and c.metadata["nbgrader"]["solution"]]
    if manual != [("markdown", 2)] * written:
        problems.append(f"written answers: {manual}")
    return problems


def release_is_fresh(pipeline: dict, week: int, release: Path) -> bool:
    fresh = pipeline["course"] / f"week{week}" / f"week{week}.ipynb"
    return json.loads(fresh.read_text()) == json.loads(release.read_text())


def executed_solution(pipeline: dict, week: int) -> Path:
    return pipeline["course"] / "autograded" / "solution" / f"week{week}" / f"week{week}.ipynb"


def failed_in_own_exercise(pipeline: dict, key: tuple[str, str]) -> set[str]:
    """The failed test ids of exercise ``key[0]`` in the submission with wrong answer ``key``."""
    report = pipeline["reports"][pipeline["where"][key]]
    return {t.grade_id for t in report.failed() if t.grade_id.startswith(key[0] + "_")}


def unexplained_failures(pipeline: dict, expected: Mapping[tuple[str, str], set[str]]) -> dict:
    """``{submission: (failed, explained)}`` wherever a wrong answers' submission failed other
    tests than its wrong answers explain, or a cell ran out of time."""
    found = {}
    for student in set(pipeline["where"].values()):
        report = pipeline["reports"][student]
        explained = set().union(*(expected[k] for k, s in pipeline["where"].items()
                                  if s == student))
        failed = {t.grade_id for t in report.failed()}
        if failed != explained or any(t.timed_out for t in report.tests):
            found[student] = (failed, explained)
    return found


def feedback_of(pipeline: dict) -> dict[tuple[str, str], str]:
    """What grading said to the submission carrying each wrong answer."""
    return {key: "\n".join(pipeline["reports"][student].lines())
            for key, student in pipeline["where"].items()}


def graded_week_suite(*, week: int, exercises: int, total: float, wrong, expected,
                      demos: list[str], said: Mapping[tuple[str, str], str],
                      secrets: list[str]) -> dict:
    """The tests every graded week runs, for ``globals().update(...)`` in its test module.

    ``wrong``: ``{(exercise, name): edits}``; ``expected``: ``{(exercise, name): the test ids
    it must fail}``; ``demos``: text the executed solution must show; ``said``: words the
    feedback to a wrong answer must contain; ``secrets``: text the release must not contain.
    """
    import pytest

    source = REPO / "solutions" / f"week{week}" / f"week{week}.ipynb"
    release = REPO / f"week{week}" / f"week{week}.ipynb"

    @pytest.mark.parametrize("path", [source, release], ids=["solution", "release"])
    def test_committed_notebooks_have_no_outputs(path):
        assert code_cells_with_outputs(path) == []

    def test_every_exercise_has_visible_and_hidden_tests_and_the_points_add_up():
        assert notebook_shape_problems(source, exercises, total) == []

    def test_no_exercise_is_graded_through_another_exercises_answer():
        assert answers_used_across_exercises(source) == []

    def test_the_release_hides_solutions_hidden_tests_and_model_answers():
        text = release.read_text()
        assert [s for s in ["BEGIN SOLUTION", "BEGIN HIDDEN TESTS", *secrets] if s in text] == []
        assert graded(release).keys() == graded(source).keys()

    def test_the_wrong_answers_name_real_cells_of_their_own_exercise():
        ids = graded(source).keys() | {c.metadata["nbgrader"]["grade_id"] for c in cells(source)
                                       if c.metadata.get("nbgrader", {}).get("solution")}
        for (exercise, name), edits in wrong.items():
            assert all(cell.startswith(exercise + "_") and cell in ids for cell in edits), name
            assert expected[(exercise, name)] <= ids, name

    @pytest.fixture(scope="module")
    def pipeline(tmp_path_factory):
        return grade_week_with_wrong_answers(week, source, wrong,
                                             tmp_path_factory.mktemp(f"week{week}-grading"))

    @pytest.mark.slow
    def test_the_committed_release_is_what_generate_assignment_makes(pipeline):
        assert release_is_fresh(pipeline, week, release), (
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
        assert [t.grade_id for t in solution.failed()] == []
        assert solution.summary() == f"week{week}: {total:g}/{total:g}"

    @pytest.mark.slow
    @pytest.mark.parametrize(("exercise", "name"), list(wrong),
                             ids=[f"{e}-{n}" for e, n in wrong])
    def test_a_wrong_answer_loses_points_on_its_own_exercise(pipeline, exercise, name):
        failed = failed_in_own_exercise(pipeline, (exercise, name))
        assert failed == expected[(exercise, name)], (failed, expected[(exercise, name)])

    @pytest.mark.slow
    def test_wrong_answers_lose_nothing_outside_their_exercises(pipeline):
        unexplained = unexplained_failures(pipeline, expected)
        assert unexplained == {}, unexplained

    @pytest.mark.slow
    def test_hidden_test_messages_say_what_is_wrong(pipeline):
        feedback = feedback_of(pipeline)
        unsaid = [(key, words) for key, words in said.items() if words not in feedback[key]]
        assert unsaid == [], unsaid

    @pytest.mark.slow
    def test_make_check_on_the_untouched_release_prints_zero(pipeline):
        done = pipeline["blank"]
        assert done.returncode == 0, done.stderr[-2000:]
        assert done.stdout.strip().splitlines()[-1] == f"week{week}: 0/{total:g}"

    return {name: value for name, value in locals().items()
            if name.startswith("test_") or name == "pipeline"}
