"""A whole term of ``make grade``, checked row by row after every step: no hand grade lost.

One class of five on week 1, in a course folder inside a mode-0700 folder (where root's
own clones live; as root the grading kernels run as another account, which must still
reach what they need). ``make test-all`` runs this file as root; the student's account runs
it again as a normal user (``tests/test_as_a_student.py`` runs every fast test of the
files that use the grading), so both instructors are covered by the same steps:

roster -> due date -> the first round brought in from an LMS download (``make
collect-lms``: nbgrader's zip_collect) -> grade -> hand grades (nbgrader's API, as the
formgrader writes them) -> resubmissions through the exchange (one late, one with a
changed written answer, one with the same answers) -> grade again -> grade one student
-> three SIGKILLs in the middle of ``make grade`` (each proven to have landed) and a last
run -> feedback -> export -> an extension (``make extend``) -> feedback returned to every
gradable student -> the Canvas gradebook CSV.

The class: ada (every exercise), bo (the blank release), cy (exercises 1-2 only), dee
(every exercise, a day late), eve (every exercise; resubmits the same written answers
with a code cell changed) and fay (a notebook that is not valid JSON). zed, who is not on
the class list, is in the download too.
"""

from __future__ import annotations

import csv
import os
import signal
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest
from classroom_fixtures import build_course
from weeks import release_of

REPO = Path(__file__).resolve().parent.parent
SOURCE = REPO / "solutions" / "week1" / "week1.ipynb"
RELEASE = release_of(1)  # as committed: weekN/ is a learner's to edit
AUTO, WRITTEN = 19.0, 4.0  # week 1: autograded points, written answers (2 x 2)
ROSTER = [("ada", "Ada", "Lovelace"), ("bo", "Bo", "Diddley"), ("cy", "Cy", "Twombly"),
          ("dee", "Dee", "Dee"), ("eve", "Eve", "Arden"), ("fay", "Fay", "Wray")]
UNREADABLE, STRANGER = "fay", "zed"  # fay's notebook is not JSON; zed is not on the list
CLASS = {s for s, _, _ in ROSTER} | {STRANGER}  # a row each in grades/week1.csv
GRADED = CLASS - {UNREADABLE}
ON_TIME, DUE = "2026-12-01 09:00:00.000000 UTC", "2026-12-02 09:00 UTC"


def instructor(course: Path, *args: str, env: dict | None = None,
               check: bool = True) -> subprocess.CompletedProcess:
    """One instructor step, as its make target runs it (``make grade WEEK=1`` ...)."""
    done = subprocess.run([sys.executable, "-m", "course.term.instructor", *args,
                           "--repo", str(course)], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=600)
    if check:
        assert done.returncode == 0, f"{args}: {done.stdout[-2000:]}{done.stderr[-2000:]}"
    return done


def grade(course: Path, *extra: str, env: dict | None = None,
          check: bool = True) -> subprocess.CompletedProcess:
    return instructor(course, "grade", "--week", "1", "--workers", "2", *extra, env=env,
                      check=check)


def table(course: Path) -> dict[str, dict[str, str]]:
    instructor(course, "export", "--week", "1")
    with open(course / "grades" / "week1.csv") as f:
        return {row["student"]: row for row in csv.DictReader(f)}


def regrades(course: Path) -> list[dict[str, str]]:
    path = course / "grades" / "week1-regrades.csv"
    if not path.is_file():
        return []
    with open(path) as f:
        return list(csv.DictReader(f))


def _cell(nb, grade_id: str):
    return next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)


def submit(course: Path, student: str, nb, when: str = ON_TIME) -> None:
    """A resubmission as ``make collect`` brings it from the exchange: the notebook, its
    ``timestamp.txt`` and the ``submission_secret.txt`` nbgrader's submit writes."""
    folder = course / "submitted" / student / "week1"
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, folder / "week1.ipynb")
    (folder / "timestamp.txt").write_text(when)
    (folder / "submission_secret.txt").write_text(f"secret-of-{student}")


def lms_download(path: Path, files: dict[str, str]) -> Path:
    """A zip as an LMS hands one out: every file in a folder of its own."""
    with zipfile.ZipFile(path, "w") as archive:
        for name, text in files.items():
            archive.writestr(f"week1 submissions/{name}", text)
    return path


def hand_grade(course: Path, student: str, scores: dict[str, float],
               comments: dict[str, str] | None = None) -> None:
    """What the formgrader does when a grader scores a written answer and comments."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        nb = gb.find_submission_notebook("week1", "week1", student)
        for grade in nb.grades:
            if grade.name in scores:
                grade.manual_score = scores[grade.name]
                grade.needs_manual_grade = False
        for comment in nb.comments:
            if comment.name in (comments or {}):
                comment.manual_comment = comments[comment.name]
        gb.db.commit()


def manual_of(course: Path, student: str) -> dict[str, float | None]:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        nb = gb.find_submission_notebook("week1", "week1", student)
        return {g.name: g.manual_score for g in nb.grades if g.name.startswith("reflection")}


def num(row: dict[str, str], column: str) -> float:
    return float(row[column] or "nan")


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    private = tmp_path_factory.mktemp("term")
    private.chmod(0o700)  # like /root: nobody else may enter
    course = build_course(private / "clone")
    (course / "students.csv").write_text(
        "id,first_name,last_name,email,lms_user_id\n"
        + "".join(f"{i},{f},{last},{i}@example.com,{1000 + n}\n"
                  for n, (i, f, last) in enumerate(ROSTER)))
    return course


@pytest.fixture(scope="module")
def term(course):
    """The steps up to the first export; later tests go on from there, in file order."""
    said = instructor(course, "roster", "--file", str(course / "students.csv")).stdout
    assert "6 student(s)" in said
    assert "due 2026-12-02 09:00" in instructor(course, "due", "--week", "1",
                                                "--due", DUE).stdout
    solution, blank = nbformat.read(SOURCE, as_version=4), nbformat.read(RELEASE, as_version=4)
    half = nbformat.read(SOURCE, as_version=4)
    for grade_id in ("ex3_prediction", "ex4_reducer", "reflection_1", "reflection_2"):
        _cell(half, grade_id).source = _cell(blank, grade_id).source
    text = nbformat.writes
    download = lms_download(course.parent / "week1-submissions.zip", {
        "ada_2026-12-01T09-00-00Z_week1.ipynb": text(solution),
        "bo_week1.ipynb": text(blank),  # no time in the name
        "cy_20261201T090000Z_week1.ipynb": text(half),
        "dee_2026-12-03T09-00-00Z_week1.ipynb": text(solution),  # 24 h late
        "eve_2026-12-01T09-00-00Z_week1.ipynb": text(solution),
        "fay_2026-12-01T08-00-00Z_week1.ipynb": '{"cells": [oops',  # not a notebook
        "zed_2026-12-01T09-00-00Z_week1.ipynb": text(solution),
        "index.html": "<p>the LMS's own page</p>"})
    brought = instructor(course, "collect-lms", "--week", "1", "--file", str(download)).stdout
    first = grade(course)
    return first, table(course), brought


def test_an_lms_download_comes_in_with_names_and_times(course, term):
    *_, brought = term
    assert "bo: WARNING: the download gives no submission time" in brought
    assert not (course / "submitted" / "bo" / "week1" / "timestamp.txt").exists()
    for student in CLASS:
        assert f"{student}: collected into submitted/{student}/week1/" in brought
        if student == "bo":
            continue
        stamp = (course / "submitted" / student / "week1" / "timestamp.txt").read_text()
        assert stamp == ("2026-12-03 09:00:00" if student == "dee" else
                         "2026-12-01 08:00:00" if student == UNREADABLE else
                         "2026-12-01 09:00:00")
        assert not (course / "submitted" / student / "week1" / "submission_secret.txt"
                    ).exists()
    assert f"{STRANGER}: WARNING: not on the class list" in brought
    assert "index.html" in brought  # a skipped file is named


def test_the_unreadable_notebook_keeps_its_names_and_speaks_to_the_instructor(term):
    first, rows, _ = term
    fay = rows[UNREADABLE]
    assert (fay["first_name"], fay["last_name"]) == ("Fay", "Wray")
    assert fay["submitted_at"] == "2026-12-01 08:00:00"
    assert fay["note"].startswith("not graded: submitted/fay/week1/week1.ipynb is not a "
                                  "readable notebook")
    assert "ask fay for a readable copy" in fay["note"] and \
        "make grade WEEK=1 STUDENT=fay" in fay["note"]
    assert "Revert Notebook" not in fay["note"]  # the learner's advice is not the grader's
    assert "fay: NOT GRADED: submitted/fay/week1/week1.ipynb" in first.stdout


def test_a_submitter_not_on_the_class_list_is_named(term):
    first, rows, _ = term
    assert f"{STRANGER}: WARNING: not on the class list" in first.stdout
    assert rows[STRANGER]["note"] == "not on the class list"
    assert num(rows[STRANGER], "autograded") == AUTO  # graded all the same


def test_the_first_grading_scores_and_names_everyone(term):
    first, rows, _ = term
    assert set(rows) == CLASS
    assert "bo: no timestamp.txt in submitted/bo/week1/" in first.stdout  # counted on time
    assert rows["bo"]["submitted_at"] == "" and rows["ada"]["submitted_at"] != ""
    assert rows["ada"]["first_name"] == "Ada" and rows["eve"]["last_name"] == "Arden"
    assert num(rows["ada"], "autograded") == num(rows["dee"], "autograded") == AUTO
    assert num(rows["bo"], "autograded") == 0 and 0 < num(rows["cy"], "autograded") < AUTO
    for line in first.stdout.splitlines():
        if not line.startswith(("grading ", "wrote ", "week1 registered", "sandbox: off")):
            assert line.split(":")[0] in rows, line


def test_untouched_written_answers_score_zero_and_written_ones_wait(term):
    _, rows, _ = term
    assert rows["bo"]["manual"] == "0" and rows["bo"]["manual_state"] == "graded"
    assert rows["cy"]["manual"] == "0" and rows["cy"]["manual_state"] == "graded"
    for student in ("ada", "dee", "eve"):
        assert rows[student]["manual"] == "" and rows[student]["manual_state"] == \
            "not yet graded", rows[student]


def test_a_late_submission_is_marked_down_by_the_configured_rule(term):
    _, rows, _ = term
    assert num(rows["dee"], "late_hours") == 24.0
    assert num(rows["dee"], "late_penalty") == pytest.approx(0.1 * AUTO)  # 10 % a day
    assert num(rows["ada"], "late_penalty") == 0 and rows["ada"]["late_hours"] == ""
    assert num(rows["dee"], "total_so_far") == pytest.approx(0.9 * AUTO)


def test_hand_grades_count_and_move_the_late_penalty(course, term):
    for student in ("ada", "dee", "eve"):
        hand_grade(course, student, {"reflection_1": 2, "reflection_2": 1},
                   {"reflection_1": f"{student}: a clear answer"})
    rows = table(course)
    for student in ("ada", "dee", "eve"):
        assert rows[student]["manual"] == "3" and rows[student]["manual_state"] == "graded"
    assert num(rows["ada"], "total_so_far") == AUTO + 3
    assert num(rows["dee"], "late_penalty") == pytest.approx(0.1 * (AUTO + 3))


def test_grading_again_keeps_every_hand_grade_of_an_unchanged_answer(course, term):
    late = nbformat.read(SOURCE, as_version=4)
    _cell(late, "reflection_1").source += "\n\nOn second thought, the key must be stored first."
    submit(course, "dee", late, "2026-12-03 12:00:00.000000 UTC")  # a later resubmission
    recoded = nbformat.read(SOURCE, as_version=4)
    _cell(recoded, "ex1_parse").source += "\n# tidied up"
    submit(course, "eve", recoded, "2026-12-01 10:00:00.000000 UTC")
    again = grade(course)
    rows = table(course)
    assert manual_of(course, "ada") == {"reflection_1": 2, "reflection_2": 1}
    assert manual_of(course, "eve") == {"reflection_1": 2, "reflection_2": 1}  # same words
    assert manual_of(course, "dee") == {"reflection_1": None, "reflection_2": 1}
    assert rows["ada"]["manual"] == rows["eve"]["manual"] == "3"
    assert rows["dee"]["manual_state"] == "not yet graded"
    assert num(rows["dee"], "late_hours") == 27.0
    assert num(rows["dee"], "late_penalty") == pytest.approx(0.2 * (AUTO + 1))
    assert "dee: week1 reflection_1 changed since it was graded by hand" in again.stdout
    assert "ada: 2 hand grade(s) kept" in again.stdout
    log = regrades(course)
    assert [(e["student"], e["cell"], e["old_score"], e["old_comment"]) for e in log] == [
        ("dee", "reflection_1", "2.0", "dee: a clear answer")]


def test_one_student_alone_changes_nobody_else(course, term):
    before = table(course)
    alone = grade(course, "--student", "dee")
    assert "grading 1 submission(s)" in alone.stdout
    assert table(course) == before
    assert len(regrades(course)) == 1  # nothing logged twice
    missing = grade(course, "--student", "ziggy", check=False)
    assert missing.returncode == 2 and "no submission of week1 for ziggy" in missing.stderr


KILLS = ("merge:before#2", "merge:committed#3", "merge:feedback#1")


def test_sigkills_in_the_middle_of_grading_lose_nothing(course, term, tmp_path):
    """cy resubmits a changed written answer that was graded by hand; ``make grade`` is
    killed at each of :data:`KILLS` in turn (before a student's transaction, after one,
    between the folders), then run once more: it ends where an uninterrupted run would."""
    hand_grade(course, "cy", {"reflection_2": 1})
    changed = nbformat.read(course / "submitted" / "cy" / "week1" / "week1.ipynb",
                            as_version=4)
    _cell(changed, "reflection_2").source = "Keys before effects."
    submit(course, "cy", changed)
    for where in KILLS:
        trace = tmp_path / f"{where.replace(':', '-')}.trace"
        killed = grade(course, env={"COURSE_GRADE_KILL_AT": where,
                                    "COURSE_GRADE_KILL_TRACE": str(trace)}, check=False)
        assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
        assert trace.read_text() == f"killed at {where}\n"  # it landed where it was aimed
    grade(course)
    rows = table(course)
    assert manual_of(course, "ada") == {"reflection_1": 2, "reflection_2": 1}
    assert manual_of(course, "cy") == {"reflection_1": None, "reflection_2": None}
    assert rows["cy"]["manual_state"] == "not yet graded"
    assert [(e["student"], e["cell"]) for e in regrades(course)] == [
        ("dee", "reflection_1"), ("cy", "reflection_2")]  # each set aside exactly once
    assert set(rows) == CLASS
    for student in GRADED:
        for folder in ("autograded", "feedback"):
            assert [p.name for p in (course / folder / student).iterdir()] == ["week1"]


def test_feedback_and_export_after_the_term(course, term):
    hand_grade(course, "dee", {"reflection_1": 1}, {"reflection_1": "dee: shorter was better"})
    instructor(course, "feedback", "--week", "1")
    html = (course / "feedback" / "dee" / "week1" / "week1.html").read_text()
    assert "dee: shorter was better" in html
    assert "Rubric for graders" not in html and "BEGIN HIDDEN TESTS" not in html
    rows = table(course)
    # 27 hours late since the resubmission: two started days, 20 % of the score
    assert rows["dee"]["manual"] == "2" and num(rows["dee"], "late_penalty") == \
        pytest.approx(0.2 * (AUTO + 2))
    assert rows["bo"]["manual_state"] == "graded"
    returned = instructor(course, "return", "--week", "1", check=False)
    assert returned.returncode == 2 and "cy: written answers not graded yet" in returned.stderr
    assert "bo:" not in returned.stderr  # blank answers need nobody


def test_an_extension_is_nbgraders_and_the_late_rule_follows_it(course, term):
    """dee handed in 27 hours late; 48 hours more (nbgrader's ``grant_extension``) make it
    on time for the CSV and for the gradebook the formgrader reads; 0 takes the extension
    back."""
    from nbgrader.api import Gradebook

    said = instructor(course, "extend", "--week", "1", "--student", "dee", "--hours", "48")
    assert "dee: week1 extended by 48 h: due 2026-12-04 09:00 UTC" in said.stdout
    rows = table(course)
    assert rows["dee"]["late_hours"] == "" and num(rows["dee"], "late_penalty") == 0
    assert num(rows["dee"], "total_so_far") == AUTO + 2
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        submission = gb.find_submission("week1", "dee")
        assert submission.total_seconds_late == 0
        assert submission.notebooks[0].late_submission_penalty is None
    instructor(course, "extend", "--week", "1", "--student", "dee", "--hours", "0")
    assert num(table(course)["dee"], "late_penalty") == pytest.approx(0.2 * (AUTO + 2))
    instructor(course, "extend", "--week", "1", "--student", "dee", "--hours", "48")
    # before grading (fay's notebook waits for a readable copy), nbgrader's extension
    # needs a submission entry: it holds the extension and adds no row of its own
    before = table(course)
    instructor(course, "extend", "--week", "1", "--student", UNREADABLE, "--hours", "24")
    assert table(course) == before
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        assert gb.find_submission("week1", UNREADABLE).extension.total_seconds() == 86400
    nobody = instructor(course, "extend", "--week", "1", "--student", "ziggy", "--hours", "1",
                        check=False)
    assert nobody.returncode == 2 and "ziggy is not in the gradebook" in nobody.stderr


def test_feedback_goes_back_to_every_gradable_student(course, term):
    """Once no written answer waits (fay's unreadable notebook waits for a new copy, not a
    grader), return releases through the exchange to each student who submitted through
    it and names everyone else with the reason; nothing crashes on the LMS's submissions,
    which have no submission_secret.txt."""
    from nbgrader.utils import notebook_hash

    for student in ("cy", STRANGER):
        hand_grade(course, student, {"reflection_1": 1, "reflection_2": 1})
    instructor(course, "feedback", "--week", "1")
    returned = instructor(course, "return", "--week", "1")  # no ANYWAY: nobody waits
    out = returned.stdout
    exchanged = {"cy", "dee", "eve"}  # their last submissions came through the exchange
    assert f"released to {len(exchanged)} student(s): cy, dee, eve" in out
    outbound = course / "exchange" / "crash-resume" / "feedback"
    for student in exchanged:
        name = notebook_hash(secret=f"secret-of-{student}", notebook_id="week1")
        page = outbound / f"{name}.html"
        assert page.is_file(), student
        assert f"{student}: not returned" not in out
    assert len(list(outbound.glob("*.html"))) == len(exchanged)
    for student in GRADED - exchanged:
        assert (f"{student}: not returned: submitted outside the exchange (no "
                "submission_secret.txt") in out
        assert f"feedback/{student}/week1/week1.html" in out
    assert "fay: not returned: submitted/fay/week1/week1.ipynb is not a readable notebook" \
        in out


def test_the_canvas_gradebook_csv_sits_beside_the_courses(course, term):
    rows = table(course)
    with open(course / "grades" / "week1-canvas.csv", newline="") as f:
        canvas = list(csv.reader(f))
    assert canvas[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "week1"]
    assert canvas[1] == ["    Points Possible", "", "", "", "", f"{AUTO + WRITTEN:g}"]
    by_login = {line[3]: line for line in canvas[2:]}
    assert set(by_login) == CLASS - {STRANGER}  # no Canvas user to match: the course CSV has it
    assert STRANGER in rows
    ids = {s: str(1000 + n) for n, (s, _, _) in enumerate(ROSTER)}
    for student in GRADED - {STRANGER}:
        line = by_login[student]
        assert line[1] == ids[student] and line[5] == rows[student]["total_so_far"]
    assert by_login["ada"][0] == "Lovelace, Ada"
    assert by_login[UNREADABLE][5] == ""  # not graded: Canvas leaves the cell alone
