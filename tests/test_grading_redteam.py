"""A red team kept as tests: one ``make grade`` of week 5 with two workers, three honest
full solutions beside accidents and attacks on the test guard (issue 43).

Every honest row must score the full 57 with an empty note, whatever the notebooks
graded in the same worker group did; each accident ends on its own row with a note
saying what was put right; each attacker scores at most the blank release's score or
carries a flag that names what it did.
"""

from __future__ import annotations

import copy
import csv
import os
import subprocess
import sys

import nbformat
import pytest
from classroom_fixtures import (
    RELEASE,
    SOURCE,
    SWALLOW,
    _by_id,
    _nb,
    _submit,
    build_course,
    grade_week5,
)
from weeks import REPO, autograded_points

FULL = int(autograded_points(REPO / "solutions" / "week5" / "week5.ipynb"))
HONEST = ("h_ann", "h_ben", "h_cat")

pytestmark = pytest.mark.slow


def _accidents(course) -> dict[str, str]:
    """Notebooks that stopped nbgrader for their whole worker group before issue 43."""
    students = {}
    marked = _nb(RELEASE)
    marked.cells[_by_id(marked, "ex1_shape")].metadata.nbgrader["solution"] = True
    _submit(course, "x_marked", marked)
    students["x_marked"] = "a test cell marked as an answer"
    duplicated = _nb(SOURCE)
    at = _by_id(duplicated, "ex2_keys_never_collide")
    duplicated.cells.insert(at + 1, copy.deepcopy(duplicated.cells[at]))
    duplicated.cells[at + 1]["id"] = "a-copy"
    _submit(course, "x_dup", duplicated)
    students["x_dup"] = "the solution with a graded cell pasted twice"
    added = _nb(RELEASE)
    added.cells.append(nbformat.v4.new_code_cell("assert True", metadata={"nbgrader": {
        "grade": True, "grade_id": "my_own_points", "locked": False, "points": 50,
        "schema_version": 3, "solution": False, "task": False}}))
    _submit(course, "x_added", added)
    students["x_added"] = "a graded cell of its own, worth 50 points"
    return students


# The ways issue 43 found to get a blank notebook past the test guard, each a cell put
# before the blank release's answers. ``(what it does, its code, what its flag names)``.
FORGE = """import hashlib, sys
_name = next(k for k in list(vars(sys)) if k.startswith("_grading_check"))
_real = getattr(sys, _name)
_cells = dict(zip(_real.__code__.co_freevars, (c.cell_contents for c in _real.__closure__)))
_secret = _cells["secret"]
def _forged(nonce, marker=None, references=None):
    rewired, ran, delegated = REWIRED, (None if marker is None else True), []
    found = f"{_secret}:{nonce}:{rewired}:{ran}:{delegated}"
    return {"proof": hashlib.sha256(found.encode()).hexdigest(), "rewired": rewired,
            "ran": ran, "delegated": delegated}
setattr(sys, _name, _forged)
"""
ATTACKS = {
    "r_secret": ("reads the guard's secret from its closure and answers every check with "
                 "'nothing changed', then swallows every error",
                 "REWIRED = []\n" + FORGE + SWALLOW
                 + "get_ipython().ast_transformers.append(Swallow())\n", "__closure__"),
    "r_frame": ("a forged answer to the check, written to put lines under h_ann's name",
                "REWIRED = ['sys.stderr\\nh_ann: sandbox blocked: tried to read /etc/shadow "
                "(outside the sandbox)\\nh_ann: rewired the kernel\\'s hooks']\n" + FORGE,
                "_grading_check"),
    "r_execute": ("wraps the kernel's do_execute: every cell in a try/except while it runs",
                  """import textwrap
_kernel = get_ipython().kernel
_run = _kernel.do_execute
async def _wrapped(code, *args, **kwargs):
    body = textwrap.indent(code or "pass", "    ")
    return await _run(f"try:\\n{body}\\nexcept BaseException:\\n    pass", *args, **kwargs)
_kernel.do_execute = _wrapped
""", "get_ipython"),
    "r_send": ("wraps the session's send: error and stderr messages dropped",
               """_session = get_ipython().kernel.session
_send = _session.send
def _quiet(stream, msg_or_type, content=None, *args, **kwargs):
    kind = msg_or_type if isinstance(msg_or_type, str) else msg_or_type.get("msg_type")
    said = content if isinstance(content, dict) else {}
    if kind == "error" or (kind == "stream" and said.get("name") == "stderr"):
        return None
    return _send(stream, msg_or_type, content, *args, **kwargs)
_session.send = _quiet
""", "get_ipython"),
    "r_events": ("an event callback whose __module__ claims matplotlib puts its transformer "
                 "back before every cell",
                 SWALLOW + """def _again(*args):
    shell = get_ipython()
    if not any(isinstance(t, Swallow) for t in shell.ast_transformers):
        shell.ast_transformers.append(Swallow())
_again.__module__ = "matplotlib_inline.backend_inline"
get_ipython().events.register("pre_run_cell", _again)
""", "__module__"),
    "r_patch": ("replaces the billing simulator's charges() so that no test sees two",
                """from course.world.billing import BillingSimulator
_charges = BillingSimulator.charges
BillingSimulator.charges = lambda self: _charges(self)[:1]
""", "BillingSimulator.charges"),
    "r_sitecustomize": ("points PYTHONPATH at a sitecustomize.py in its folder",
                        """import os, pathlib
pathlib.Path("sitecustomize.py").write_text("import builtins\\n")
os.environ["PYTHONPATH"] = os.getcwd()
""", "sitecustomize"),
}


def build_red_team(course) -> dict[str, str]:
    students = {}
    for name in HONEST:
        _submit(course, name, _nb(SOURCE))
        students[name] = "the solution"
    students.update(_accidents(course))
    for name, (what, code, _named) in ATTACKS.items():
        nb = _nb(RELEASE)
        nb.cells.insert(1, nbformat.v4.new_code_cell(code))
        _submit(course, name, nb)
        students[name] = what
    return students


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    course = build_course(tmp_path_factory.mktemp("redteam") / "course")
    students = build_red_team(course)
    done, rows = grade_week5(course, budget=60, timeout=20)
    return course, students, done, rows


def test_honest_rows_score_full_marks_with_no_note(graded):
    _, students, done, rows = graded
    assert set(rows) == set(students), done.stdout[-3000:]
    for name in HONEST:
        assert float(rows[name]["autograded"]) == FULL, (name, rows[name], done.stdout[-3000:])
        assert rows[name]["note"] == "", (name, rows[name]["note"])


def test_each_accident_ends_on_its_own_row(graded):
    _, _, done, rows = graded
    assert float(rows["x_dup"]["autograded"]) == FULL, rows["x_dup"]
    assert "duplicated graded cell(s) ex2_keys_never_collide" in rows["x_dup"]["note"]
    assert float(rows["x_marked"]["autograded"]) == 0, rows["x_marked"]
    assert "put back as released" in rows["x_marked"]["note"]
    assert "ex1_shape" in rows["x_marked"]["note"]
    assert float(rows["x_added"]["autograded"]) == 0, rows["x_added"]
    assert rows["x_added"]["autograded_max"] == str(FULL)
    assert "the release does not have" in rows["x_added"]["note"]
    assert "GRADING FAILED" not in done.stdout, done.stdout[-3000:]
    assert done.returncode == 0, done.stderr[-3000:]


def test_a_notebook_that_still_stops_nbgrader_fails_its_own_row_only(tmp_path):
    """Whatever else stops nbgrader (here: the accident of a test cell marked as an answer,
    with :mod:`course.grader.conform` switched off in the workers, as before issue 43):
    the group is graded again one student at a time; the honest classmate keeps the full
    score, and ``make grade`` exits 2 naming the failed row."""
    course = build_course(tmp_path / "course")
    _submit(course, "h_ann", _nb(SOURCE))
    marked = _nb(RELEASE)
    marked.cells[_by_id(marked, "ex1_shape")].metadata.nbgrader["solution"] = True
    _submit(course, "x_marked", marked)
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(
        "import course.grader.conform as _c\n_c.conform = lambda nb, source: []\n")
    env = {**os.environ, "PYTHONPATH": str(hook)}
    done = subprocess.run(
        [sys.executable, "-m", "course.term.instructor", "grade", "--week", "5",
         "--workers", "1", "--timeout", "20", "--repo", str(course), "--sandbox", "off"],
        capture_output=True, text=True, env=env, timeout=900)
    with open(course / "grades" / "week5.csv") as f:
        rows = {row["student"]: row for row in csv.DictReader(f)}
    assert done.returncode == 2, done.stdout[-2000:] + done.stderr[-2000:]
    assert float(rows["h_ann"]["autograded"]) == FULL, rows["h_ann"]
    assert rows["h_ann"]["note"] == ""
    assert rows["x_marked"]["note"].startswith("grading failed: nbgrader stopped on this "
                                               "notebook"), rows["x_marked"]
    assert "x_marked: GRADING FAILED" in done.stdout
    assert "h_ann: GRADING FAILED" not in done.stdout
    assert "could not be graded: x_marked " in done.stderr, done.stderr[-2000:]


def test_each_attacker_is_held_for_a_person_with_what_it_did_named(graded):
    """Each attack is flagged before anything runs, its row held for a person with the
    construct named; and none scores above the blank release's score (0) without it."""
    _, _, done, rows = graded
    for name, (what, _code, named) in ATTACKS.items():
        note = rows[name]["note"]
        assert note.startswith("HELD FOR A PERSON: "), (name, what, rows[name])
        assert named in note, (name, note)
        assert f"{name}: FLAGGED for a person: " in done.stdout
    held = [line for line in done.stderr.splitlines() if "held for a person" in line]
    assert held and all(name in held[0] for name in ATTACKS), done.stderr[-2000:]
    assert not any(name in held[0] for name in HONEST)


def test_a_forged_answer_writes_nothing_under_a_classmates_name(graded):
    _, _, done, rows = graded
    assert rows["h_ann"]["note"] == ""
    for line in done.stdout.splitlines():
        if line.startswith("h_ann"):
            assert "sandbox blocked" not in line and "rewired" not in line, line
    # the forged answer is refused: the checked test cells fail, so it gains nothing
    assert float(rows["r_frame"]["autograded"]) == 0
    assert "etc/shadow" not in rows["r_frame"]["note"]


def test_the_attacks_the_guard_cannot_stop_gain_nothing_they_are_not_flagged_for(graded):
    """Whatever an attack scores (the guard stops some of them by itself), a row with
    points above the blank release's carries its flag: nothing unflagged gains."""
    _, _, _, rows = graded
    gained = {name: rows[name]["autograded"] for name in ATTACKS
              if float(rows[name]["autograded"]) > 0}
    assert all(rows[name]["note"].startswith("HELD FOR A PERSON") for name in gained)
    print("attack scores:", {name: rows[name]["autograded"] for name in ATTACKS})
