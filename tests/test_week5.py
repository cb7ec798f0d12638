"""Week 5: the notebooks, the nbgrader pipeline and ``make check``.

The expensive parts run once per module: one nbgrader run (``generate_assignment``
+ ``autograde``) grades the solution and a known-wrong answer together and keeps
its course folder, so the same run also gives the freshly generated release
(compared with the committed ``week5/``) and the headless execution of the
solution notebook (the autograded copy). ``make check`` itself is run once, on
the untouched release.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import nbformat
import pytest
from weeks import (
    cells,
    finish,
    grade_in_a_process,
    graded,
    nbgrader_state_in_repo,
    reports_of,
    start_make_check,
)

from course.classroom.lab import first_notebook
from course.grading import autograde as grading
from course.grading.checks import (
    DiesAfter,
    NotPortable,
    Spy,
    in_fresh_interpreter,
    kill_self,
    perturbed,
    portable_source,
    run_forked,
)

REPO = Path(__file__).resolve().parent.parent
SOURCE = REPO / "solutions" / "week5" / "week5.ipynb"
RELEASE = REPO / "week5" / "week5.ipynb"
pytestmark = [  # warnings from nbgrader's own code (gradebook, re-added cells): harmless
    pytest.mark.filterwarnings("ignore:Object of type <Submitted:sqlalchemy.exc.SAWarning"),
    pytest.mark.filterwarnings("ignore::nbformat.warnings.MissingIDFieldWarning"),
]
DOUBLE_CHARGE_TESTS = {"ex2_test_resume_does_not_double_charge", "ex7_kill_after_charge"}


# ------------------------------------------------------------ the notebooks
@pytest.mark.parametrize("path", [SOURCE, RELEASE], ids=["solution", "release"])
def test_committed_notebooks_have_no_outputs(path):
    for cell in cells(path):
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, cell.source[:60]


def test_every_exercise_has_visible_and_hidden_tests_with_points():
    source_cells = cells(SOURCE)
    tests = {}
    for cell in source_cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("grade") and not meta.get("solution"):
            assert meta["locked"] and meta["schema_version"] == 3 and meta["points"] > 0
            exercise = cell.source.split(",")[0].removeprefix("# ")
            hidden = "### BEGIN HIDDEN TESTS" in cell.source
            tests.setdefault(exercise, set()).add(hidden)
    assert sorted(tests) == [f"Exercise {n}" for n in range(1, 8)]
    assert all(kinds == {True, False} for kinds in tests.values()), tests
    ids = [c.metadata["nbgrader"]["grade_id"] for c in source_cells if "nbgrader" in c.metadata]
    assert len(ids) == len(set(ids)), "grade ids must be unique"
    written = [c for c in source_cells if c.metadata.get("nbgrader", {}).get("grade")
               and c.metadata["nbgrader"]["solution"]]
    assert [(c.cell_type, c.metadata["nbgrader"]["points"]) for c in written] == [
        ("markdown", 2)] * 3
    assert sum(g["points"] for g in graded(SOURCE).values() if not g["solution"]) == 52


def test_the_customers_test_is_there_by_name():
    sources = [c.source for c in cells(RELEASE)]
    assert any("def test_resume_does_not_double_charge():" in s for s in sources)


def test_the_release_hides_solutions_hidden_tests_and_model_answers():
    text = RELEASE.read_text()
    for secret in ("BEGIN SOLUTION", "BEGIN HIDDEN TESTS", "in_fresh_interpreter",
                   "Four nodes write to the outside world"):
        assert secret not in text, secret
    assert text.count("raise NotImplementedError()") >= 7
    assert graded(RELEASE).keys() == graded(SOURCE).keys()


def test_nbgrader_config_points_at_solutions_and_the_repo_root():
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(REPO)).load_config()
    assert config.CourseDirectory.source_directory == "solutions"
    assert config.CourseDirectory.release_directory == "."
    assert config.ExecutePreprocessor.timeout > 0
    assert config.OverwriteCells.add_missing_cells is True


def test_make_lab_opens_the_first_week_that_exists():
    weeks = sorted(REPO.glob("week[1-6]/*.ipynb"))
    assert RELEASE in weeks
    assert first_notebook() == weeks[0]


# ------------------------------------------------------ the checks helpers
def _keyed(state):
    return f"{state['thread_id']}:charge:{state['invoice_id']}"


def _salted(state):
    return f"{state['thread_id']}:{hash(state['invoice_id'])}"


def _clocked(state):
    import time

    return f"{state['thread_id']}:{int(time.time())}"


WORLD_LIKE = object()


def _reads_a_live_object(state):
    return str(WORLD_LIKE)


def test_in_fresh_interpreter_catches_a_key_that_depends_on_the_process():
    state = {"thread_id": "t1", "invoice_id": "inv_9"}
    assert in_fresh_interpreter(_keyed, state, hash_seed=1) == _keyed(state)
    assert in_fresh_interpreter(_salted, state, hash_seed=1) != in_fresh_interpreter(
        _salted, state, hash_seed=2)
    with pytest.raises(NotPortable, match="WORLD_LIKE"):
        portable_source(_reads_a_live_object)


def _notebook_namespace(*sources: str) -> dict:
    """A namespace as IPython leaves it: each cell executed, its source in ``In`` and in
    linecache (where ``inspect.getsource`` finds a cell's functions)."""
    import linecache

    namespace = {"In": ["", *sources], "__name__": "__main__"}
    for number, source in enumerate(sources, 1):
        filename = f"<test-cell-{number}>"
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        exec(compile(source, filename, "exec"), namespace)
    return namespace


def test_in_fresh_interpreter_reruns_the_notebook_code_so_a_per_process_salt_changes():
    cells = _notebook_namespace(
        "import os, uuid\nSALT = uuid.uuid4().hex[:8]\nPID = os.getpid()\nPREFIX = 'cw'",
        "def salted(state):\n    return f\"{PREFIX}:{state['thread_id']}:{SALT}\"",
        "def by_pid(state):\n    return f\"{state['thread_id']}:{PID}\"",
        "def honest(state):\n    return f\"{PREFIX}:{state['thread_id']}:charge\"")
    state = {"thread_id": "t1"}
    assert "SALT = uuid.uuid4().hex[:8]" in portable_source(cells["salted"])
    assert in_fresh_interpreter(cells["salted"], state) != cells["salted"](state)
    assert in_fresh_interpreter(cells["by_pid"], state) != cells["by_pid"](state)
    assert in_fresh_interpreter(cells["honest"], state) == cells["honest"](state) == "cw:t1:charge"


def test_perturbed_moves_every_clock_in_the_calling_thread_only():
    import datetime
    import threading
    import time
    from time import perf_counter

    namespace = {"perf_counter": perf_counter}

    def readings():
        return (int(time.time()), time.time_ns() // 10**9, int(time.monotonic()),
                time.monotonic_ns() // 10**9, int(time.perf_counter()),
                int(namespace["perf_counter"]()), time.strftime("%Y%m%d%H"), time.ctime(),
                time.asctime(), time.localtime().tm_yday, time.gmtime().tm_yday,
                datetime.datetime.now().isoformat()[:13],
                datetime.datetime.utcnow().isoformat()[:13],
                datetime.datetime.today().isoformat()[:13], datetime.date.today().isoformat())

    seen = {}
    for seed in (1, 2):
        with perturbed(namespace, seed=seed):
            seen[seed] = readings()
            elsewhere = []
            other = threading.Thread(target=lambda box=elsewhere: box.append(time.monotonic()))
            other.start()
            other.join()
        assert abs(elsewhere[0] - time.monotonic()) < 60  # other threads keep real time
    assert all(a != b for a, b in zip(seen[1], seen[2], strict=True)), seen
    assert namespace["perf_counter"] is perf_counter and time.perf_counter is perf_counter


def test_perturbed_moves_the_clock_and_the_dice_and_puts_them_back():
    import time
    import uuid

    state = {"thread_id": "t1", "invoice_id": "inv_9"}
    with perturbed(seed=1):
        a, u1 = _clocked(state), uuid.uuid4()
    with perturbed(seed=2):
        b, u2 = _clocked(state), uuid.uuid4()
    assert a != b and u1 != u2
    assert abs(time.time() - __import__("datetime").datetime.now().timestamp()) < 5
    with perturbed(seed=1):
        k1 = _keyed(state)
    with perturbed(seed=2):
        assert _keyed(state) == k1


def test_run_forked_reports_a_real_sigkill_and_the_proxies_work(world):
    assert run_forked(kill_self) == "SIGKILL"
    assert run_forked(lambda: None) == "exit 0"
    spy = Spy(world.billing)
    spy.find_by_key("nothing-here")
    assert spy.called("find_by_key") == 1 and spy.called("charge") == 0
    dying = DiesAfter(world.webhook, "post")
    assert run_forked(lambda: dying.post("e", {"invoice_id": "inv_9"})) == "SIGKILL"
    assert len(world.webhook.deliveries()) == 1  # it landed, then the process died


# ------------------------------------------------------------ make check CLI
def test_check_explains_bad_input_and_grades_nothing(capsys, tmp_path):
    assert grading.main(["--week", "9"]) == 2
    assert "there is no week 9" in capsys.readouterr().err
    assert grading.main(["--week", "5", "--submission", str(tmp_path / "nope")]) == 2
    assert "does not exist" in capsys.readouterr().err
    (tmp_path / "other.ipynb").write_text("{}")
    assert grading.main(["--week", "5", "--submission", str(tmp_path)]) == 2
    assert "has no week5.ipynb (it has: other.ipynb)" in capsys.readouterr().err
    (tmp_path / "week5.ipynb").write_text('{"cells": [')  # a file broken half-way
    assert grading.main(["--week", "5", "--submission", str(tmp_path)]) == 2
    assert "is not a readable notebook" in capsys.readouterr().err


# ------------------------------------------------------ the nbgrader pipeline
def _keyless_and_tampered(source: Path, target: Path) -> Path:
    """The solution, except that ``charge`` sends no idempotency key, and the student also
    tried to hide it: the customer's test was edited to pass and the kill test deleted."""
    nb = nbformat.read(source, as_version=4)
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id == "ex2_charge":
            keyed = ", idempotency_key=charge_key(state))"
            assert keyed in cell.source
            cell.source = cell.source.replace(keyed, ")")
        elif grade_id == "ex2_test_resume_does_not_double_charge":
            cell.source = "print('all good')"
    nb.cells = [c for c in nb.cells
                if c.metadata.get("nbgrader", {}).get("grade_id") != "ex7_kill_after_charge"]
    target.mkdir(parents=True)
    nbformat.write(nb, target / "week5.ipynb")
    return target


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory):
    """Every grading this module checks, three at a time (each is mostly a kernel running a
    notebook): `make check WEEK=5` on the untouched release, as on a fresh clone; a tiny week
    whose notebooks loop forever or kill their kernel; and, in this process, one nbgrader
    run for the solution and the keyless charge, keeping its course folder (its release
    and its executed solution are checked below)."""
    root = tmp_path_factory.mktemp("week5-grading")
    keyless = _keyless_and_tampered(SOURCE, root / "keyless")
    tiny_repo, tiny_folders = _tiny_week(root / "tiny")
    before = nbgrader_state_in_repo()
    jobs = {"blank": start_make_check(5),
            "tiny": grade_in_a_process(9, tiny_folders, repo=tiny_repo, timeout_s=3)}
    try:
        reports = grading.grade(5, {"solution": SOURCE.parent, "keyless": keyless},
                                keep=root / "course")
    finally:
        done = finish(jobs)
    assert nbgrader_state_in_repo() == before, "grading wrote nbgrader files into the repo"
    return {"course": root / "course", **reports, **done}


@pytest.mark.slow
def test_the_committed_release_is_what_generate_assignment_makes(pipeline):
    course = pipeline["course"]
    fresh = json.loads((course / "week5" / "week5.ipynb").read_text())
    committed = json.loads(RELEASE.read_text())
    assert fresh == committed, "week5/ is out of date: run `make release` and commit week5/"


@pytest.mark.slow
def test_the_solution_runs_headless_without_errors_and_shows_the_demos(pipeline):
    course = pipeline["course"]
    executed = nbformat.read(course / "autograded" / "solution" / "week5" / "week5.ipynb",
                             as_version=4)
    errors = [(c.source[:50], o.get("ename"), o.get("evalue"))
              for c in executed.cells for o in c.get("outputs", [])
              if o.get("output_type") == "error"]
    assert errors == []
    text = "\n".join(o.get("text", "") + json.dumps(o.get("data", {}))
                     for c in executed.cells for o in c.get("outputs", []))
    assert "naive graph, kill at charge/after_effect: 2 charge(s)" in text
    assert "keyed graph, kill at charge/after_effect: 1 charge(s)" in text
    assert "test_resume_does_not_double_charge passed" in text


@pytest.mark.slow
def test_the_solution_gets_full_marks(pipeline):
    solution = pipeline["solution"]
    assert [t.grade_id for t in solution.failed()] == []
    assert solution.summary() == "week5: 52/52"
    assert solution.lines()[-1] == "week5: 52/52"
    assert [w[2] for w in solution.written] == [2, 2, 2]


@pytest.mark.slow
def test_a_charge_without_a_key_loses_exactly_the_double_charge_points(pipeline):
    """Even with the visible test edited and the kill test deleted: nbgrader puts both back."""
    keyless = pipeline["keyless"]
    assert {t.grade_id for t in keyless.failed()} == DOUBLE_CHARGE_TESTS
    lost = sum(t.points for t in keyless.tests if t.grade_id in DOUBLE_CHARGE_TESTS)
    assert keyless.earned == 52 - lost == 44
    said = "\n".join(keyless.lines())
    assert "the second run made a new charge" in said
    assert "2 charges for inv_9 after the kill and resume" in said


@pytest.mark.slow
def test_make_check_on_the_untouched_release_prints_zero(pipeline):
    """What `make check WEEK=5` runs on a fresh clone."""
    done = pipeline["blank"]
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "week5: 0/52"
    assert "NotImplementedError: the exercise is not done yet (YOUR CODE HERE)" in done.stdout


def _tiny_week(root: Path) -> tuple[Path, dict[str, Path]]:
    """A one-exercise course, week 9 (an answer cell and two test cells), and two
    submissions: one whose answer loops forever, one that kills its own kernel."""
    def cell(source, **meta):
        made = nbformat.v4.new_code_cell(source)
        made.metadata["nbgrader"] = {"schema_version": 3, "task": False, "locked": False,
                                     "grade": False, "solution": False, **meta}
        return made

    nb = nbformat.v4.new_notebook(metadata={"kernelspec": {
        "name": "python3", "display_name": "Python 3", "language": "python"}})
    nb.cells = [
        cell("def answer():\n    ### BEGIN SOLUTION\n    return 42\n    ### END SOLUTION",
             solution=True, grade_id="answer"),
        cell("# Exercise 1, visible test\nassert answer() == 42", grade=True, locked=True,
             points=1, grade_id="uses_answer"),
        cell("# Exercise 1, another test\nassert 1 + 1 == 2", grade=True, locked=True, points=1,
             grade_id="independent"),
    ]
    (root / "solutions" / "week9").mkdir(parents=True)
    nbformat.write(nb, root / "solutions" / "week9" / "week9.ipynb")
    shutil.copy(REPO / "nbgrader_config.py", root / "nbgrader_config.py")
    folders = {}
    for name, answer in [("looping", "def answer():\n    while True:\n        pass"),
                         ("dying", "import os\nos._exit(3)\ndef answer():\n    return 42")]:
        nb.cells[0].source = answer
        (root / name).mkdir()
        nbformat.write(nb, root / name / "week9.ipynb")
        folders[name] = root / name
    return root, folders


@pytest.mark.slow
def test_a_looping_or_dying_notebook_gets_a_clear_message_and_grading_goes_on(pipeline):
    reports = reports_of(pipeline["tiny"])
    stuck = reports["looping"]
    assert stuck["summary"] == "week9: 1/2"  # the cell after the stopped one still ran
    assert list(stuck["failed"]) == ["uses_answer"]
    failed = stuck["failed"]["uses_answer"]
    assert failed["timed_out"]
    assert "ran for more than 3 seconds and was stopped" in failed["message"]
    said = "\n".join(stuck["lines"])
    assert "TIME LIMIT" in said and "loop that never ends" in said

    dead = reports["dying"]
    assert dead["kernel_died"] and dead["summary"] == "week9: 0/2"
    assert "KERNEL DIED" in "\n".join(dead["lines"])


def test_make_check_without_a_week_grades_every_week_and_ends_with_a_total(monkeypatch, capsys):
    """The summary arithmetic of ``make check`` with no WEEK (nbgrader itself is stubbed here:
    the pipeline tests above grade for real)."""
    def fake_grading(week, folder, args):
        tests = [grading.CellResult(f"t{week}", "ex", 4, 4 if week == 5 else 1, "")]
        return {"student": grading.Report(week=week, student="student", submission=folder,
                                          tests=tests)}

    monkeypatch.setattr(grading, "weeks_with_notebooks", lambda repo=REPO: [1, 5])
    monkeypatch.setattr(grading, "_graded", fake_grading)
    assert grading.main([]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[-3:] == ["week1: 1/4", "week5: 4/4", "total: 5/8"]
    assert 5 in grading.weeks_with_notebooks()
