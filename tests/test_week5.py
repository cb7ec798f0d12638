"""Week 5: its own tests: the checks helpers, ``make check``'s command line and what the one
grading run adds for week 5 (``GRADING``).

The checks every declared week gets (``tests/week_checks.py``, from
``solutions/week5/week.toml`` and its answer files in ``solutions/week5/answers/``) are
collected here by ``tests/conftest.py``;
the grading run
also grades a keyless charge whose student tampered with the tests, and, in the
background, a tiny week whose notebooks loop or die.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from week_pipeline import Grading
from weeks import (
    NBGRADER_WARNINGS,
    REPO,
    cells,
    grade_in_a_process,
    nbgrader_cell,
    release_of,
    reports_of,
    source_of,
    tiny_course,
)

from course.classroom.lab import first_notebook
from course.grader import cli as grading
from course.grader.report import CellResult, Report
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

SOURCE, RELEASE = source_of(5), release_of(5)
pytestmark = NBGRADER_WARNINGS
# a charge without a key fails every test that re-runs it or looks for its key
KEYLESS_CHARGE_FAILS = {"ex2_test_resume_does_not_double_charge", "ex4_lost_200_is_reconciled",
                        "ex4_not_landed_or_in_flight", "ex7_kill_after_charge",
                        "ex7_kill_anywhere"}


# ------------------------------------------------------------ the notebooks
def test_the_customers_test_is_there_by_name():
    sources = [c.source for c in cells(RELEASE)]
    assert any("def test_resume_does_not_double_charge():" in s for s in sources)


def test_nbgrader_config_points_at_solutions_and_the_repo_root():
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(REPO)).load_config()
    assert config.CourseDirectory.source_directory == "solutions"
    assert config.CourseDirectory.release_directory == "."
    assert config.ExecutePreprocessor.timeout > 0
    assert config.OverwriteCells.add_missing_cells is True


def test_make_lab_opens_the_first_week_that_exists():
    weeks = sorted(REPO.glob("week*/*.ipynb"), key=lambda p: int(p.parent.name[4:]))
    assert REPO / "week5" / "week5.ipynb" in weeks  # the learner's own copy
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


_CHARGE = """
import uuid


def charge_key(state):
    return {key}


def charge(state, world):
    result = world.billing.charge(customer_id=state["customer_id"],
                                  invoice_id=state["invoice_id"], cents=state["cents"],
                                  currency=state["currency"]{sent})
    return {{"charge": result, "log": ["charge"]}}
"""


@pytest.mark.parametrize("answer, says", [
    (_CHARGE.format(key="f\"{state['thread_id']}:charge:{uuid.uuid4()}\"",
                    sent=", idempotency_key=charge_key(state)"),
     "charge_key gave two different keys for the same state"),  # the README's bad key
    (_CHARGE.format(key="f\"{state['thread_id']}:charge:{state['invoice_id']}\"", sent=""),
     "charge sent no key"),
    (_CHARGE.format(key="f\"{state['thread_id']}:charge:{state['invoice_id']}\"",
                    sent=", idempotency_key=str(uuid.uuid4())"),
     "not charge_key(state)"),
], ids=["uuid4-key", "no-key", "another-key"])
def test_the_customers_test_names_the_likely_cause_of_a_second_charge(tmp_path, answer, says):
    """Exercise 2's visible test, run on a charge that charged twice, says why."""
    [test_cell] = [c.source for c in cells(SOURCE) if c.metadata.get("nbgrader", {}).get(
        "grade_id") == "ex2_test_resume_does_not_double_charge"]
    setup = ("import tempfile\nfrom course.world import World\n\n\ndef fresh_world():\n"
             f"    return World(tempfile.mkdtemp(dir={str(tmp_path)!r}))\n")
    with pytest.raises(AssertionError) as failed:
        _notebook_namespace(setup, answer, test_cell)
    assert str(failed.value).startswith("the second run made a new charge"), failed.value
    assert says in str(failed.value), failed.value


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


# the keyless charge, and a tiny week whose notebooks loop forever or kill their kernel
GRADING = Grading(
    more_submissions=lambda root: {"keyless": _keyless_and_tampered(SOURCE, root / "keyless")},
    more_jobs=lambda root: {"tiny": grade_in_a_process(9, *_tiny_week(root / "tiny"),
                                                       timeout_s=3)})


@pytest.mark.slow
def test_a_charge_without_a_key_loses_every_test_that_repeats_it(pipeline):
    """Even with the visible test edited and the kill test deleted: nbgrader puts both back."""
    keyless = pipeline.reports["keyless"]
    assert {t.grade_id for t in keyless.failed()} == KEYLESS_CHARGE_FAILS
    lost = sum(t.points for t in keyless.tests if t.grade_id in KEYLESS_CHARGE_FAILS)
    assert keyless.earned == 57 - lost == 39
    said = "\n".join(keyless.lines())
    assert "the second run made a new charge" in said
    assert "2 charges for inv_9 after the kill and resume" in said


TINY_WEEK = """
title = "tiny"
gains = "nothing"

[[exercises]]
number = 1
title = "the answer"
points = 2
answers = ["answer"]
visible = ["uses_answer", "independent"]
hidden = []
"""


def _tiny_week(root: Path) -> tuple[dict[str, Path], Path]:
    """A one-exercise course, week 9 (an answer cell and two test cells), and two
    submissions: one whose answer loops forever, one that kills its own kernel."""
    tiny_course(root, 9, declaration=TINY_WEEK, cells=[
        nbformat.v4.new_markdown_cell("# Week 9 — tiny\n\n## Exercise 1 — the answer"),
        nbgrader_cell("def answer():\n    ### BEGIN SOLUTION\n    return 42\n    ### END SOLUTION",
                      solution=True, grade_id="answer"),
        nbgrader_cell("# Exercise 1, visible test\nassert answer() == 42", grade=True,
                      locked=True, points=1, grade_id="uses_answer"),
        nbgrader_cell("# Exercise 1, another test\nassert 1 + 1 == 2", grade=True, locked=True,
                      points=1, grade_id="independent"),
    ])
    nb = nbformat.read(root / "solutions" / "week9" / "week9.ipynb", as_version=4)
    folders = {}
    for name, answer in [("looping", "def answer():\n    while True:\n        pass"),
                         ("dying", "import os\nos._exit(3)\ndef answer():\n    return 42")]:
        nb.cells[1].source = answer
        (root / name).mkdir()
        nbformat.write(nb, root / name / "week9.ipynb")
        folders[name] = root / name
    return folders, root


@pytest.mark.slow
def test_a_looping_or_dying_notebook_gets_a_clear_message_and_grading_goes_on(pipeline):
    reports = reports_of(pipeline.jobs["tiny"])
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
        tests = [CellResult(f"t{week}", "ex", 4, 4 if week == 5 else 1, "")]
        return {"student": Report(week=week, student="student", submission=folder,
                                          tests=tests)}

    import course.grader.selfcheck as selfcheck

    monkeypatch.setattr(grading, "weeks_with_notebooks", lambda repo=REPO: [1, 2, 5])
    monkeypatch.setattr(grading, "_graded", fake_grading)
    # the learner started weeks 1 and 5; week 2 is still the release's blank: skipped
    monkeypatch.setattr(selfcheck, "started", lambda notebook: "week2" not in notebook.name)
    assert grading.main([]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[-4:] == ["week1: 1/4", "week5: 4/4", "not started (skipped): week2",
                          "total: 5/8 (the weeks you started)"]
    assert 5 in grading.weeks_with_notebooks()


@pytest.mark.slow
def test_make_check_tells_a_learner_whose_answer_calls_the_courses_guarded(tmp_path, capsys):
    """A learner's own run: exercise 5 handed to course.durable.guarded scores 0 and
    ``make check`` says why, once, besides the failed tests' messages."""
    nb = nbformat.read(SOURCE, as_version=4)
    [cell] = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id")
              == "ex5_guarded"]
    cell.source = ("from course.durable import guarded as _theirs\n\n\n"
                   "def guarded(session_id, step, fn, args, *, store):\n"
                   "    return _theirs(session_id, step, fn, args, store=store)\n")
    nbformat.write(nb, tmp_path / "week5.ipynb")
    assert grading.main(["--week", "5", "--submission", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    line = "note: exercise 5 calls the course's reference course.durable.guard.guarded: scored 0"
    assert out.count(line) == 1, out[-2000:]
    assert "your answer calls course.durable.guard.guarded" in out
