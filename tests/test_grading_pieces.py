"""The pieces of the instructor's path that need no nbgrader run: feedback without hidden
tests, rubrics, the CSV's "not yet graded", the time budget and the sandbox (a real kernel)."""

from __future__ import annotations

import ast
import contextlib
import os
import re
import sys
import types
from pathlib import Path

import nbformat
import pytest
from classroom_fixtures import NEUTER
from nbclient import NotebookClient

from course.grader.autograde import weeks_with_notebooks
from course.grader.cells import HIDDEN as BEGIN
from course.sandbox.execute import GradingExecute
from course.sandbox.jail import availability
from course.sandbox.managers import SandboxedKernelManager
from course.sandbox.notes import student_of
from course.term import rubric
from course.term.classgrade import split
from course.term.feedback import HideHiddenTests
from course.term.grades import HEADER, Row

REPO = Path(__file__).resolve().parent.parent


def _cell(source: str, **meta) -> nbformat.NotebookNode:
    cell = nbformat.v4.new_code_cell(source)
    cell.metadata.update(meta)
    return cell


def test_feedback_keeps_the_message_and_drops_hidden_code_tracebacks_and_rubrics():
    test = _cell("assert visible_ok()\n### BEGIN HIDDEN TESTS\nassert secret_answer == 42\n"
                 "### END HIDDEN TESTS\n")
    test.outputs = [nbformat.v4.new_output(
        "error", ename="AssertionError", evalue="refund has no key",
        traceback=["----> 3 assert secret_answer == 42", "AssertionError: refund has no key"])]
    note = nbformat.v4.new_markdown_cell("**Rubric for graders** model answer")
    note.metadata["course"] = {"rubric": True}
    nb = nbformat.v4.new_notebook(cells=[test, note])
    out, _ = HideHiddenTests().preprocess(nb, {})
    assert len(out.cells) == 1
    assert "secret_answer" not in out.cells[0].source and BEGIN not in out.cells[0].source
    assert "assert visible_ok()" in out.cells[0].source
    assert out.cells[0].outputs[0].traceback == ["AssertionError: refund has no key"]


@pytest.mark.parametrize("week", weeks_with_notebooks(REPO))
def test_every_written_answer_has_a_rubric(week):
    assert rubric.missing_rubrics(REPO, week) == [], f"add sections to rubrics/week{week}.md"


def test_the_autograde_step_puts_each_rubric_after_its_answer_once():
    """AddRubric, as nbgrader's autograde runs it (the course's configuration names it):
    each section of rubrics/week5.md right after its written answer, never twice, and
    nothing for an assignment that is not a week or a course without rubrics."""
    from course.term.coursedir import course_config

    nb = nbformat.read(REPO / "solutions" / "week5" / "week5.ipynb", as_version=4)
    step = rubric.AddRubric(config=course_config(REPO))
    assert step.course_root == str(REPO)
    resources = {"nbgrader": {"assignment": "week5"}}
    once, _ = step.preprocess(nb, resources)
    cells = once.cells
    assert sum(rubric.is_rubric_cell(c) for c in cells) == len(rubric.read_rubric(REPO, 5)) == 3
    for i, cell in enumerate(cells):
        if rubric.is_rubric_cell(cell):
            assert cells[i - 1].metadata["nbgrader"]["solution"], "a rubric follows its answer"
    twice, _ = step.preprocess(once, resources)
    assert sum(rubric.is_rubric_cell(c) for c in twice.cells) == 3
    fresh = nbformat.read(REPO / "solutions" / "week5" / "week5.ipynb", as_version=4)
    assert not any(rubric.is_rubric_cell(c) for c in step.preprocess(
        fresh, {"nbgrader": {"assignment": "extra"}})[0].cells)
    elsewhere = rubric.AddRubric(course_root="/nonexistent")
    graded, _ = elsewhere.preprocess(fresh, resources)
    assert not any(rubric.is_rubric_cell(c) for c in graded.cells)


def test_the_csv_tells_not_yet_graded_from_zero():
    waiting = Row("ada", "2026-12-01 04:00:00", 52, 52, None, 6)
    zero = Row("bo", "", 52, 52, 0.0, 6)
    assert dict(zip(HEADER, waiting.cells(), strict=True))["manual"] == ""
    assert dict(zip(HEADER, waiting.cells(), strict=True))["manual_state"] == "not yet graded"
    assert dict(zip(HEADER, zero.cells(), strict=True))["manual"] == "0"
    assert dict(zip(HEADER, zero.cells(), strict=True))["manual_state"] == "graded"


def test_groups_share_the_class_without_empty_groups():
    assert split(["a", "b", "c"], 2) == [["a", "c"], ["b"]]
    assert split(["a"], 8) == [["a"]]
    assert student_of("/x/course/autograded/ada/week5") == "ada"


def test_the_notebook_budget_stops_every_later_cell_quickly(tmp_path):
    loops = [nbformat.v4.new_code_cell("while True: pass") for _ in range(3)]
    nb = nbformat.v4.new_notebook(cells=[*loops, nbformat.v4.new_code_cell("print('ran')")])
    run = GradingExecute(timeout=60, notebook_budget=3, allow_errors=True,
                         interrupt_on_timeout=True)
    run.preprocess(nb, {"metadata": {"path": str(tmp_path)}})
    last = [[o for o in c.outputs if o.output_type == "error"][-1] for c in nb.cells[:3]]
    assert all(o.ename == "CellTimeoutError" for o in last), last
    assert all("budget" in o.evalue for o in last[1:]), last
    assert nb.cells[3].outputs[0].text == "ran\n"


SNOOP = """
import glob, os, pathlib, socket, course
repo = pathlib.Path(course.__file__).resolve().parents[1]
seen = {}
for name, p in [("solutions", repo / "solutions/week5/week5.ipynb"),
                ("gradebook", repo / "gradebook.db"), ("clone", CLONE / "solutions"),
                ("home", pathlib.Path("/root"))]:
    try:
        seen[name] = sorted(os.listdir(p)) if p.is_dir() else len(p.read_bytes())
    except OSError as error:
        seen[name] = type(error).__name__
seen["glob"] = glob.glob(str(CLONE / "solutions" / "*"))
for target in [repo / "planted.txt", pathlib.Path("mine.txt")]:
    try:
        target.write_text("x"); seen[target.name] = "written"
    except OSError as error:
        seen[target.name] = type(error).__name__
try:
    socket.create_connection(("127.0.0.1", 22), timeout=1); seen["net"] = "connected"
except OSError as error:
    seen["net"] = type(error).__name__
seen["uid"] = os.getuid()
seen["processes"] = [open(f"/proc/{pid}/cmdline").read().split(chr(0))[0]
                     for pid in os.listdir("/proc") if pid.isdigit()]
seen["course"] = sorted(os.listdir(repo))
seen["environment"] = sorted(os.environ)
print(seen)
"""


@pytest.fixture
def another_clone():
    """A copy of the course's solutions at a world-readable path, as another instructor's
    clone (or a classmate's download) would be."""
    import shutil
    import tempfile

    clone = Path(tempfile.mkdtemp(prefix="another-clone-"))
    clone.chmod(0o755)
    shutil.copytree(REPO / "solutions" / "week5", clone / "solutions" / "week5")
    yield clone
    shutil.rmtree(clone)


@pytest.mark.sandbox
@pytest.mark.skipif(bool(availability()), reason=f"no sandbox here: {availability()}")
def test_a_sandboxed_kernel_reaches_only_what_it_is_allowed(tmp_path, monkeypatch,
                                                             another_clone):
    """The allow-list: no solutions, gradebook, other clone or home folder; its own
    processes only; no network; writes only in its scratch folder; every attempt logged,
    a lookup (``is_dir``) and a glob included."""
    log = tmp_path / "sandbox.log"
    monkeypatch.setenv("COURSE_GRADING_NOTES", str(log))
    monkeypatch.setenv("DB_URL", "postgresql://grader:hunter2@db/course")  # a make variable
    monkeypatch.setenv("MAKEFLAGS", " -- DB_URL=postgresql://grader:hunter2@db/course")
    where = tmp_path / "autograded" / "mallory" / "week5"
    where.mkdir(parents=True)
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        f"import pathlib\nCLONE = pathlib.Path({str(another_clone)!r})\n{SNOOP}")])
    NotebookClient(nb, kernel_manager_class=SandboxedKernelManager, timeout=60,
                   resources={"metadata": {"path": str(where)}}).execute()
    seen = ast.literal_eval(nb.cells[0].outputs[0].text)
    assert seen["solutions"] == seen["gradebook"] == seen["clone"] == "FileNotFoundError"
    assert seen["home"] in ("FileNotFoundError", [".pyenv"], []), seen["home"]
    # the repository's folder holds only the package and its environment (and, where the
    # repository lies below /tmp, what the notebook wrote into its own private /tmp)
    assert seen["glob"] == [] and {"course"} <= set(seen["course"]), seen["course"]
    assert not {"solutions", "rubrics", ".git", "gradebook.db"} & set(seen["course"])
    # the grader's environment stays out (an allow-list): no make variable, no credential
    assert not {"DB_URL", "MAKEFLAGS", "COURSE_GRADING_NOTES"} & set(seen["environment"])
    assert "hunter2" not in nb.cells[0].outputs[0].text
    assert not (REPO / "planted.txt").exists()
    # a network namespace of its own: loopback only, where nothing of the machine listens
    assert seen["mine.txt"] == "written" and seen["uid"] != 0
    assert seen["net"] in ("OSError", "ConnectionRefusedError")
    assert len(seen["processes"]) <= 3 and not any(
        "ipykernel" in p or "pytest" in p for p in seen["processes"]), seen["processes"]
    lines = log.read_text().splitlines()
    said = "\n".join(lines)
    assert all(line.startswith("mallory: sandbox blocked: ") for line in lines), lines
    assert f"tried to look up {another_clone}/solutions " in said, said
    assert f"tried to list {another_clone}/solutions/*" in said, said
    assert "tried to read" in said and "solutions/week5/week5.ipynb" in said, said
    assert "mine.txt" not in said
    if not str(REPO).startswith("/tmp/"):  # else the write went to its own private /tmp
        assert "planted.txt" in said


def test_without_bubblewrap_the_reason_is_one_sentence(monkeypatch):
    from course.sandbox import jail

    monkeypatch.setattr(jail, "bwrap", lambda: None)
    assert jail.works().startswith("bubblewrap is not installed (Debian: apt-get install")


def test_the_hub_environment_of_a_folder_that_is_no_checkout_says_so(tmp_path, monkeypatch):
    """A copy of the files, not a git clone: one clear reason, no build, no traceback."""
    import shutil

    from course.term.hub import DEPENDENCY_FILES, HubUnavailable, using

    repo, copy = Path(__file__).resolve().parent.parent, tmp_path / "copy"
    for name in ("pyproject.toml", *DEPENDENCY_FILES):
        (copy / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(repo / name, copy / name)
    monkeypatch.setenv("COURSE_HUB_HOME", str(tmp_path / "hubs"))
    with pytest.raises(HubUnavailable, match="cannot read the repository's tracked files"), \
            using(copy):
        pass
    assert not (tmp_path / "hubs").exists()


def test_the_late_rule_takes_a_share_per_started_day_and_never_more_than_the_score():
    from course.term.late import PercentPerDay

    rule = PercentPerDay(percent_per_day=10)
    assert rule.late_submission_penalty("ada", 20, 1) == pytest.approx(2)  # a second late
    assert rule.late_submission_penalty("ada", 20, 86400) == pytest.approx(2)
    assert rule.late_submission_penalty("ada", 20, 86401) == pytest.approx(4)
    assert rule.late_submission_penalty("ada", 20, 30 * 86400) == pytest.approx(20)
    assert PercentPerDay(percent_per_day=0).late_submission_penalty("ada", 20, 86401) is None
    zero = PercentPerDay(percent_per_day=0, penalty_method="zero")
    assert zero.late_submission_penalty("ada", 20, 5) == 20  # nbgrader's own rule


def test_bad_roster_and_due_date_are_one_line_errors_that_write_nothing(tmp_path):
    from course.grader.autograde import GradingError
    from course.term.instructor import import_roster, set_due_date

    url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    wrong = tmp_path / "class.csv"
    wrong.write_text("name,email\nada,ada@example.com\n")
    for path, said in ((wrong, "an 'id' column (found: name, email)"),
                       (tmp_path / "missing.csv", "no such file")):
        with pytest.raises(GradingError, match=re.escape(said)) as error:
            import_roster(path, REPO, url)
        assert "\n" not in str(error.value)
    with pytest.raises(GradingError, match="is not a date"):
        set_due_date(1, "next friday-ish", REPO, url)
    assert not (tmp_path / "gradebook.db").exists()


def test_feedback_never_quotes_a_hidden_test_or_names_a_grading_folder():
    """A forked worker's traceback, printed on stderr by a hidden test, quotes the test's
    line and the grader's paths: the feedback keeps only its last line."""
    import sys

    hidden = 'guarded("s2", "pay", lambda amount, idem_key: kill_self(), {"amount": 7},'
    test = _cell(f"assert visible_ok()\n{BEGIN}\n{hidden}\n    store)\n### END HIDDEN TESTS\n")
    worker = (f"Traceback (most recent call last):\n  File \"{REPO}/course/crash/harness.py\", "
              f"line 9, in run\n    {hidden}\n  File \"{sys.prefix}/lib/x.py\", line 2\n"
              "ChildCrashed: the worker was killed\nafter the crash: 1 charge\n")
    test.outputs = [nbformat.v4.new_output("stream", name="stderr", text=worker)]
    answer = _cell("print(open('data.csv').name)")
    answer.outputs = [nbformat.v4.new_output("stream", name="stdout",
                                             text="/run/course-grading/ada-x1/data.csv\n")]
    out, _ = HideHiddenTests().preprocess(nbformat.v4.new_notebook(cells=[test, answer]), {})
    text = out.cells[0].outputs[0].text
    assert text == "ChildCrashed: the worker was killed\nafter the crash: 1 charge\n", text
    assert out.cells[1].outputs[0].text == "…/ada-x1/data.csv\n"


# A thread that puts the transformer back whenever the grader takes it away.
STUBBORN = NEUTER + r'''
import threading, time
def keep():
    while True:
        if not get_ipython().ast_transformers:
            get_ipython().ast_transformers.append(Swallow())
        time.sleep(0.0005)
threading.Thread(target=keep, daemon=True).start()
'''
# An event callback that puts the transformer back before each cell, its __module__
# claiming a library's name (issue 43: such callbacks were kept).
FORGED_MODULE = NEUTER + r'''
def again(*args):
    if not get_ipython().ast_transformers:
        get_ipython().ast_transformers.append(Swallow())
again.__module__ = "matplotlib_inline.backend_inline"
get_ipython().events.register("pre_run_cell", again)
'''
HONEST = """from __future__ import annotations
import matplotlib.pyplot as plt
plt.plot([1, 2]); plt.close()
"""


def _graded_cells(first: str, tmp_path, student: str = "eve"):
    def test(source: str, grade_id: str):
        return _cell(source, nbgrader={"grade": True, "solution": False, "locked": True,
                                       "grade_id": grade_id, "points": 1})
    answer = _cell(first, nbgrader={"grade": False, "solution": True, "locked": False,
                                    "grade_id": "answer"})
    nb = nbformat.v4.new_notebook(cells=[answer, test("assert False, 'wrong'", "t1"),
                                         test("x = 1\nassert x == 1", "t2")])
    where = tmp_path / "autograded" / student / "week5"
    where.mkdir(parents=True)
    GradingExecute(timeout=30, sandbox="off").preprocess(nb, {"metadata": {"path": str(where)}})
    return [[o.get("ename") for o in c.outputs if o.get("output_type") == "error"]
            for c in nb.cells[1:]], nb


@pytest.mark.parametrize("cheat", [NEUTER, STUBBORN, FORGED_MODULE],
                         ids=["transformer", "thread", "forged-module"])
def test_a_notebook_cannot_neuter_its_tests_and_is_named(cheat, tmp_path, monkeypatch):
    notes = tmp_path / "notes.log"
    monkeypatch.setenv("COURSE_GRADING_NOTES", str(notes))
    errors, _ = _graded_cells(cheat, tmp_path)
    assert errors[0], "the failing test must fail"
    said = notes.read_text()
    assert said.startswith("eve: rewired the kernel's ") and "ast_transformers" in said, said
    if cheat is NEUTER:
        assert errors == [["AssertionError"], []] and "sys.stderr" in said
    if cheat is FORGED_MODULE:
        assert "events.pre_run_cell" in said, said


def test_an_honest_notebook_is_not_called_a_rewirer(tmp_path, monkeypatch):
    notes = tmp_path / "notes.log"
    monkeypatch.setenv("COURSE_GRADING_NOTES", str(notes))
    errors, _ = _graded_cells(HONEST, tmp_path)
    assert errors == [["AssertionError"], []]
    assert not notes.exists() or notes.read_text() == ""


def test_a_reference_called_under_another_name_is_seen_from_answers_only(tmp_path):
    """The watch sees the reference through an alias and from a forked child, and not when
    code that is not an answer (a test, the package itself) calls it."""
    import linecache

    from course.grading.checks import run_forked
    from course.sandbox.references import watching

    answer = "from course.durable import actions as a\nalias = a.checkpoint_before\n" \
             "def mine(g, c, n):\n    return alias(g, c, n)\n"
    filename = str(tmp_path / "answer.py")
    linecache.cache[filename] = (len(answer), None, answer.splitlines(True), filename)
    space: dict = {}
    exec(compile(answer, filename, "exec"), space)

    class Graph:  # a thread with no checkpoint: checkpoint_before raises ValueError
        def get_state(self, config):
            return types.SimpleNamespace(config=None, next=(), parent_config=None)

    def call_it():
        with contextlib.suppress(ValueError):
            space["mine"](Graph(), {"configurable": {"thread_id": "t"}}, "charge")

    with watching(["course.durable.actions.checkpoint_before"], [answer]) as seen:
        call_it()
    assert seen == {"course.durable.actions.checkpoint_before"}
    with watching(["course.durable.actions.checkpoint_before"], [answer]) as seen:
        run_forked(call_it)
    assert seen == {"course.durable.actions.checkpoint_before"}
    with watching(["course.durable.actions.checkpoint_before"], ["something else"]) as seen:
        call_it()
    assert seen == set()


def test_a_reference_the_exercises_own_answer_binds_is_seen_before_any_call():
    """An answer that imports the reference under the answer's name (or assigns it) is the
    reference: the tests call it directly, so no answer code is ever its caller."""
    import functools

    from course.durable import actions
    from course.sandbox.references import watching

    ref = "course.durable.actions.checkpoint_before"
    for own in ("from course.durable.actions import checkpoint_before as mine\n",
                "from course.durable import actions\nmine = actions.checkpoint_before\n",
                "import functools\nfrom course.durable.actions import checkpoint_before\n"
                "mine = functools.wraps(checkpoint_before)(lambda *a: checkpoint_before(*a))\n"):
        space: dict = {}
        exec(own, space)
        with watching([ref], [own], [own], namespace=space) as seen:
            pass
        assert seen == {ref}, own
    honest = "def mine(graph, config, node):\n    return None\n"
    space = {"mine": lambda *a: None, "helper": actions.checkpoint_before}  # not its name
    with watching([ref], [honest], [honest], namespace=space) as seen:
        pass
    assert seen == set()
    space = {"mine": functools.partial(print)}  # a callable without code
    with watching([ref], [honest], [honest], namespace=space) as seen:
        pass
    assert seen == set()


def _errored(cell: nbformat.NotebookNode, ename: str, evalue: str) -> nbformat.NotebookNode:
    cell.outputs = [nbformat.v4.new_output("error", ename=ename, evalue=evalue, traceback=[])]
    return cell


def test_a_test_failing_because_its_answer_cell_raised_says_so_and_keeps_indentation(
        tmp_path):
    """What `make check` prints when a test cell's NameError comes from its answer cell: a
    blank answer is "not done yet", a broken one names its own error first; a message of
    two lines keeps the second line under the first."""
    from course.grader.declaration import load
    from course.grader.scoring import read_report

    week = load(1)
    first, fourth = week.exercise(1), week.exercise(4)
    answer = {"solution": True, "grade": False}
    cells = [_errored(_cell("def parse(state):\n    return {", nbgrader={
                 **answer, "grade_id": first.answers[0]}), "SyntaxError", "'{' was never closed"),
             _errored(_cell("# YOUR CODE HERE\nraise NotImplementedError()", nbgrader={
                 **answer, "grade_id": fourth.answers[0]}), "NotImplementedError", "")]
    for grade_id in first.tests + fourth.tests:
        cells.append(_errored(_cell("assert parse", nbgrader={"grade": True, "solution": False,
                                                              "grade_id": grade_id}),
                              "NameError", "name 'parse' is not defined"))
    for grade_id in week.exercise(2).visible:  # an assertion message of two lines
        cells.append(_errored(_cell("assert wire", nbgrader={"grade": True, "solution": False,
                                                             "grade_id": grade_id}),
                              "AssertionError", "the graph runs parse twice\n  parse → parse"))
    folder = tmp_path / "autograded" / "student" / "week1"
    folder.mkdir(parents=True)
    nbformat.write(nbformat.v4.new_notebook(cells=cells), folder / "week1.ipynb")
    report = read_report(tmp_path, week, "student", tmp_path, ["week1.ipynb"], 60, {})
    said = {t.grade_id: t.message for t in report.tests}
    assert {said[g] for g in fourth.tests} == {
        "NotImplementedError: the exercise is not done yet (YOUR CODE HERE)"}
    assert {said[g] for g in first.tests} == {
        "its answer cell raised SyntaxError: '{' was never closed; fix that first (the test "
        "then said: NameError: name 'parse' is not defined)"}
    lines = report.lines()
    at = lines.index("      AssertionError: the graph runs parse twice")
    assert lines[at + 1] == "        parse → parse"


def test_make_check_says_when_it_grades_another_clones_notebooks(tmp_path):
    from course.grader.cli import other_clone_note

    clone = tmp_path / "clone"
    (clone / "course").mkdir(parents=True)
    (clone / "course" / "__init__.py").write_text("")
    (clone / "Makefile").write_text("")
    repo = tmp_path / "repo"
    note = other_clone_note(clone, repo)
    assert note is not None and f"grades the notebooks in {repo}/, not in {clone}/" in note
    assert other_clone_note(repo, repo) is None  # the clone whose course this Python imports
    assert other_clone_note(tmp_path, repo) is None  # not a clone of the course at all


@pytest.mark.parametrize("path, student, when", [
    ("/d/week5 submissions/ada_2026-12-01T09-00-00Z_week5.ipynb", "ada",
     "2026-12-01 09:00:00 UTC"),
    ("/d/bo_20261201T100000+0100_week5.ipynb", "bo", "2026-12-01 10:00:00+01:00"),
    ("/d/cy/20261201T090000Z_week5.ipynb", "cy", "2026-12-01 09:00:00 UTC"),
    ("/d/dee_week5.ipynb", "dee", None),
    ("/d/eve/week5.ipynb", "eve", None),
])
def test_the_lms_collector_reads_ids_and_times_from_file_names(path, student, when):
    from nbgrader.utils import parse_utc

    from course.term.lms import LmsCollector

    info = LmsCollector().collect(path)
    assert (info["student_id"], info["file_id"], info.get("timestamp")) == (
        student, "week5.ipynb", when)
    if when:
        parse_utc(info["timestamp"])  # a time nbgrader reads (zip_collect parses it)


def test_the_lms_collector_skips_what_it_cannot_place_and_takes_a_pattern():
    from course.term.lms import LmsCollector

    assert LmsCollector().collect("/d/index.html") is None  # not a notebook
    assert LmsCollector().collect("/d/a_b_week5.ipynb") is None  # whose is it?
    mine = LmsCollector(named_regexp=r".*/(?P<student_id>[a-z]+)-(?P<file_id>week5)-"
                                     r"(?P<timestamp>[0-9T:Z-]+)\.ipynb")  # the guide's
    assert mine.collect("/d/ada-week5-2026-12-01T09-00-00Z.ipynb") == {
        "student_id": "ada", "file_id": "week5", "timestamp": "2026-12-01 09:00:00 UTC"}


def test_a_held_row_reaches_canvas_blank_and_an_honest_one_with_its_score(tmp_path,
                                                                         monkeypatch):
    """A row the flagger held waits for a person before any score reaches the students'
    LMS: the Canvas CSV leaves it empty, as it does a row whose written answers wait; the
    honest row beside it keeps its score, and the course's own CSV keeps both notes."""
    from nbgrader.api import Gradebook

    from course.term.grades import canvas_rows

    bin_dir = str(Path(sys.executable).parent)  # nbgrader runs the alembic program
    monkeypatch.setenv("PATH", bin_dir + os.pathsep + os.environ.get("PATH", ""))
    url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    with Gradebook(url) as gb:
        gb.update_or_create_student("ada", lms_user_id="101")
        gb.update_or_create_student("bo", lms_user_id="102")
    held = Row("bo", "2026-12-01 10:00", 57, 57, None, 0,
               note="HELD FOR A PERSON: reaches into the grader (imports course.sandbox.guard)")
    honest = Row("ada", "2026-12-01 09:00", 50, 57, None, 0)
    _, lines = canvas_rows(5, [honest, held], repo=tmp_path, db_url=url)
    scores = {line[3]: line[-1] for line in lines[1:]}
    assert scores == {"ada": "50", "bo": ""}
    assert held.cells()[-1].startswith("HELD FOR A PERSON")
