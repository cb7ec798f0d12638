"""``make grade WEEK=5`` on a class: honest, wrong and hostile submissions, graded in
parallel (two workers), sandboxed when root, into one gradebook; checked row by row."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest
from classroom_fixtures import another_clone, build_class, build_course, grade_week5
from weeks import REPO, autograded_points

from course.sandbox.jail import availability
from course.term.coursedir import in_sync

FULL = int(autograded_points(REPO / "solutions" / "week5" / "week5.ipynb"))

pytestmark = pytest.mark.slow
SANDBOXED = availability() == ""


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    course = build_course(tmp_path_factory.mktemp("class") / "course")
    # another clone of the course at a world-readable path (pytest's folders are private)
    elsewhere = Path(tempfile.mkdtemp(prefix="another-clone-"))
    elsewhere.chmod(0o755)
    students = build_class(course, another_clone(elsewhere / "course"))
    done, rows = grade_week5(course, budget=30, timeout=10)
    yield course, students, done, rows
    shutil.rmtree(elsewhere)


def points(rows, student) -> float:
    return float(rows[student]["autograded"])


def test_every_submission_has_a_row_and_the_class_is_registered(graded):
    course, students, done, rows = graded
    assert done.returncode == 0, done.stderr[-3000:]
    assert set(rows) == set(students)
    assert in_sync(course, 5)
    assert all(rows[s]["autograded_max"] == str(FULL) for s in students)


def test_honest_work_gets_what_it_earned(graded):
    _, _, _, rows = graded
    assert points(rows, "alice") == FULL
    assert points(rows, "bob") == 0
    assert 0 < points(rows, "carol") < FULL  # exercises 1-4 only
    assert points(rows, "dave") < FULL  # a random key: the hidden tests catch it
    assert rows["alice"]["submitted_at"] == "2026-12-01 09:00:00"


def test_written_answers_wait_for_a_person_unless_left_blank(graded):
    """A written answer the student never touched scores 0 with nobody (nbgrader's own rule);
    one they wrote waits for a grader and is never a silent 0."""
    _, _, _, rows = graded
    # the release's answers, untouched (judy's too, but her kernel died before nbgrader
    # scored anything, so hers wait for a person like every answer of a dead kernel)
    blank = {"bob", "heidi", "mallory", "niaj", "oscar", "peggy", "trent", "victor"}
    for student, row in rows.items():
        if row["note"].startswith("not graded"):
            continue
        assert row["manual_max"] == "6" and row["total_max"] == str(FULL + 6)
        if student in blank:
            assert row["manual"] == "0" and row["manual_state"] == "graded", row
        else:
            assert row["manual"] == "" and row["manual_state"] == "not yet graded", row


def test_a_loop_costs_the_loop_and_the_rest_is_still_graded(graded):
    course, _, done, rows = graded
    assert 0 < points(rows, "erin") < FULL
    assert "time limit" in rows["erin"]["note"]
    assert any(line.startswith("erin: stopped by the time limit") for line in
               done.stdout.splitlines())
    # the loop costs the notebook's budget (COURSE_NOTEBOOK_BUDGET above), not a full
    # per-cell limit in each of the eight cells that call it
    graded_nb = (course / "autograded" / "erin" / "week5" / "week5.ipynb").read_text()
    assert "used up its 30-second budget" in graded_nb


def test_broken_and_tampered_notebooks_are_graded_without_gifts(graded):
    _, _, done, rows = graded
    assert 0 < points(rows, "frank") < FULL  # syntax error in exercise 1 only
    assert points(rows, "grace") == FULL  # deleted test cells were put back and passed
    assert points(rows, "heidi") == 0  # emptied test cells were put back and failed
    assert points(rows, "ivan") == FULL  # sys.exit() is an error in one cell, not the end
    assert points(rows, "judy") == 0 and "kernel died" in rows["judy"]["note"]
    assert rows["kim"]["note"].startswith("not graded") and "not a readable notebook" in \
        rows["kim"]["note"]
    restored = [line for line in done.stdout.splitlines() if "put back" in line]
    assert "heidi: the locked cell ex1_shape was edited; the original was put back" in restored
    assert not [line for line in restored if line.startswith("alice")]  # hidden tests differ
    assert "put back" in rows["heidi"]["note"]  # by design: no line for them


@pytest.mark.sandbox
@pytest.mark.skipif(not SANDBOXED, reason=f"no sandbox here: {availability()}")
def test_the_cheater_gains_nothing_and_is_logged(graded):
    course, _, done, rows = graded
    assert points(rows, "mallory") == points(rows, "bob") == 0
    assert "sandbox blocked" in rows["mallory"]["note"]
    lines = done.stdout.splitlines()
    assert any(line.startswith("mallory: sandbox blocked: tried to read")
               and "solutions/week5/week5.ipynb" in line for line in lines), lines
    assert any(line.startswith("mallory: sandbox blocked") and "gradebook.db" in line
               for line in lines)
    assert not (course / "planted.txt").exists() and not os.path.exists("/etc/planted.txt")
    assert "sandbox blocked" in rows["niaj"]["note"]


def test_a_notebook_that_takes_too_much_is_stopped_and_named_on_its_row(graded):
    """Memory, processes, output and disk (course/sandbox/limits.py), each beside honest
    students in the same run: the hostile row names its limit, in the log with the
    student's name; what each cost its own notebook is the limit's, not more."""
    _, _, done, rows = graded
    lines = done.stdout.splitlines()
    for student, limit in (("uma", "disk limit"), ("xavier", "memory limit"),
                           ("yvonne", "process limit"), ("zoe", "output limit")):
        assert limit in rows[student]["note"], (student, rows[student])
        assert any(line.startswith(f"{student}: ") and limit in line for line in lines), (
            student, [line for line in lines if line.startswith(student)])
    # a MemoryError and a cut output fail only their own cell: the solution still scores
    assert points(rows, "xavier") == points(rows, "zoe") == FULL
    # a fork bomb's and a disk filler's kernel is stopped: nothing of it is scored
    assert points(rows, "yvonne") == points(rows, "uma") == 0
    assert "kernel was stopped" in rows["yvonne"]["note"] and \
        "kernel was stopped" in rows["uma"]["note"]


def test_every_line_about_a_student_names_them(graded):
    _, students, done, _ = graded
    general = ("grading ", "wrote ", "week5 registered", "sandbox: off",
               "WARNING: there is no class list")  # this class has no roster
    for line in done.stdout.splitlines():
        if not line.startswith(general):
            assert line.split(":")[0] in students, line


def test_feedback_names_failed_hidden_tests_but_never_shows_them(graded):
    course, _, _, _ = graded
    html = (course / "feedback" / "bob" / "week5" / "week5.html").read_text()
    # a name only hidden tests use (week 5 declares it a secret of the release)
    assert "BEGIN HIDDEN TESTS" not in html and "in_fresh_interpreter" not in html
    assert "hidden tests ran here" in html
    assert "NotImplementedError" in html
    assert "Rubric for graders" not in html
    autograded = (course / "autograded" / "bob" / "week5" / "week5.ipynb").read_text()
    assert autograded.count("Rubric for graders") == 3


@pytest.mark.sandbox
@pytest.mark.skipif(not SANDBOXED, reason=f"no sandbox here: {availability()}")
def test_clever_cheats_gain_nothing_and_each_is_on_its_row(graded):
    """Another clone of the course, a classmate's kernel, tests neutered from inside the
    kernel, a glob of the hidden folders: each scores what its honest part (the blank
    release) earns, 0, and the rewiring and every reach outside the walls are named."""
    course, _, done, rows = graded
    lines = done.stdout.splitlines()
    for student in ("oscar", "peggy", "trent", "victor"):
        assert points(rows, student) == 0, (student, rows[student])
    assert any(line.startswith("oscar: sandbox blocked: tried to read") and
               "another-clone-" in line and "solutions/week5/week5.ipynb" in line
               for line in lines), lines
    assert "sandbox blocked" in rows["oscar"]["note"]
    snooped = (course / "autograded" / "peggy" / "week5" / "week5.ipynb").read_text()
    assert "classmates found: []" in snooped  # its own processes only
    assert any(line.startswith("trent: rewired the kernel's") and "ast_transformers" in line
               and "sys.stderr" in line for line in lines), lines
    assert "rewired the kernel" in rows["trent"]["note"]
    victor = [line.split(" (")[0] for line in lines if line.startswith("victor: sandbox")]
    assert any(line.startswith(("victor: sandbox blocked: tried to list",
                                "victor: sandbox blocked: tried to look up"))
               and line.endswith("/solutions") for line in victor), victor
    assert any(line.startswith("victor: sandbox blocked: tried to look up")
               and line.endswith("/rubrics") for line in victor), victor
    # exercise 5 (13 points) handed to the package's own guarded: the rest is hers
    assert points(rows, "wendy") == FULL - 13
    assert "called the course's reference implementation (exercise 5)" in rows["wendy"]["note"]
    assert "wendy: exercise 5 calls the course's reference course.durable.guard.guarded: " \
           "scored 0" in lines
    honest = [line for line in lines if line.startswith(("alice", "bob", "carol", "dave"))]
    assert not [line for line in honest if "sandbox blocked" in line or "rewired" in line]


def test_no_feedback_quotes_a_hidden_test_or_names_a_grading_folder(graded):
    """Every student's feedback, wrong, broken and hostile answers included: no line of a
    hidden test of 25 characters or more, and no folder of the grading machine."""
    from course.sandbox.jail import SANDBOX_ROOT
    from course.term.feedback import hidden_lines

    course, students, _, _ = graded
    import nbformat

    quotes = [q for q in hidden_lines(nbformat.read(
        REPO / "solutions" / "week5" / "week5.ipynb", as_version=4)) if len(q) >= 25]
    assert len(quotes) > 20
    folders = [str(course), str(REPO), sys.prefix, str(SANDBOX_ROOT)]
    pages = sorted((course / "feedback").glob("*/week5/week5.html"))
    # every student's but kim's (not a notebook) and those whose kernel died before any
    # score: judy's (os._exit), uma's and yvonne's (stopped at the disk and process limits)
    assert {p.parent.parent.name for p in pages} == set(students) - {
        "kim", "judy", "uma", "yvonne"}
    for page in pages:
        import html as _html

        text = _html.unescape(page.read_text())
        student = page.parent.parent.name
        # a path the student wrote into their own notebook (mallory's) is theirs to see
        own = (course / "submitted" / student / "week5" / "week5.ipynb").read_text()
        found = [q for q in quotes if q in text] + [f for f in folders
                                                    if f in text and f not in own]
        assert not found, (student, found[:3])
