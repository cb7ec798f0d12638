"""nbgrader's whole exchange path on one machine, as documented in docs/instructors.md:
an instructor's course folder and a student's own configuration, a temporary exchange.

release (to-students) → fetch_assignment → submit → collect → make grade (autograde +
feedback) → manual grading of the written answers (what the formgrader stores) →
feedback → return (release_feedback) → fetch_feedback, and the student's fetched
feedback has the right score and no hidden test.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from classroom_fixtures import SOURCE, build_course
from weeks import autograded_points

pytestmark = pytest.mark.slow
NBGRADER = str(Path(sys.executable).parent / "nbgrader")
# nbgrader names a submission after the login account (not $USER), and the student's
# commands must run this virtualenv's Python; so the student is this account, with a
# configuration and a home of its own.
FULL = int(autograded_points(SOURCE))
ADA = pwd.getpwuid(os.getuid()).pw_name


def instructor(course: Path, env: dict, step: str, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "course.grading.instructor", step, "--week",
                           "5", "--repo", str(course), *extra], env=env, capture_output=True,
                          text=True, timeout=1200)


def student(home: Path, env: dict, *args: str) -> subprocess.CompletedProcess:
    done = subprocess.run([NBGRADER, *args], cwd=home, env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return done


def test_release_fetch_submit_collect_grade_return_fetch_feedback(tmp_path):
    course = build_course(tmp_path / "course")
    exchange = tmp_path / "exchange"
    env = {**os.environ, "COURSE_EXCHANGE": str(exchange)}
    home = tmp_path / "ada"
    home.mkdir()
    (home / "nbgrader_config.py").write_text(
        "c = get_config()\n"
        "c.CourseDirectory.course_id = 'crash-resume'\n"
        f"c.Exchange.root = {str(exchange)!r}\n")
    ada = {k: v for k, v in os.environ.items() if not k.startswith("COURSE_")}
    ada.update(HOME=str(home), USER="ada", LOGNAME="ada",
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")

    done = instructor(course, env, "to-students")
    assert done.returncode == 0, done.stderr[-2000:]
    assert (exchange.stat().st_mode & 0o1777) == 0o1777
    student(home, ada, "fetch_assignment", "week5")
    fetched = home / "week5" / "week5.ipynb"
    assert "### BEGIN HIDDEN TESTS" not in fetched.read_text()
    shutil.copy(SOURCE, fetched)  # ada solves every exercise
    student(home, ada, "submit", "week5")

    done = instructor(course, env, "collect")
    assert done.returncode == 0 and ADA in done.stdout, done.stderr[-2000:]
    assert (course / "submitted" / ADA / "week5" / "week5.ipynb").is_file()
    done = instructor(course, env, "grade", "--workers", "1")
    assert done.returncode == 0 and f"{ADA}: week5: {FULL}/{FULL} autograded" in done.stdout, \
        done.stdout + done.stderr[-2000:]

    refused = instructor(course, env, "return")
    assert refused.returncode == 2
    assert f"{ADA}: written answers not graded yet" in refused.stderr

    from nbgrader.api import Gradebook  # what the formgrader saves when a grader scores

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        for name, points in {"reflection_1": 2, "reflection_2": 1, "reflection_3": 2}.items():
            grade = gb.find_grade(name, "week5", "week5", ADA)
            grade.manual_score = points
            grade.needs_manual_grade = False
        gb.db.commit()
    assert instructor(course, env, "feedback").returncode == 0
    done = instructor(course, env, "return")
    assert done.returncode == 0, done.stderr[-2000:]
    assert instructor(course, env, "export").returncode == 0
    row = (course / "grades" / "week5.csv").read_text().splitlines()[1].split(",")
    assert row[0] == ADA and row[4] == "5" and row[6] == "graded" and row[7] == str(FULL + 5)

    student(home, ada, "fetch_feedback", "week5")
    [html] = (home / "week5" / "feedback").glob("*/week5.html")
    text = html.read_text()
    assert f"week5 (Score: {FULL + 5}.0 / {FULL + 6}.0)" in text, text[:3000]
    assert "BEGIN HIDDEN TESTS" not in text and "Rubric for graders" not in text
