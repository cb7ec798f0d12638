"""``make grade DB_URL=postgresql://...``: the class gradebook in the course's real Postgres.

No notebook runs here: a group's gradebook is filled the way nbgrader's autograde fills
it, then merged into Postgres and exported, which is what ``make grade`` does after
the groups finish."""

from __future__ import annotations

import csv

import pytest
from classroom_fixtures import build_course
from weeks import REPO, autograded_points

from course.term.coursedir import db_url_of, in_sync, release
from course.term.grades import export
from course.term.merge import merge

FULL = int(autograded_points(REPO / "solutions" / "week5" / "week5.ipynb"))


@pytest.mark.slow
def test_register_merge_and_export_on_postgres(tmp_path, postgres_db):
    course = build_course(tmp_path / "course")
    url = db_url_of(course, postgres_db)
    assert url.startswith("postgresql+psycopg://")
    release(5, course, postgres_db)
    assert in_sync(course, 5, postgres_db)

    group = tmp_path / "group" / "course"
    group.mkdir(parents=True)
    from nbgrader.api import Gradebook

    release(5, course, f"sqlite:///{group / 'gradebook.db'}")
    (course / "submitted" / "ada" / "week5").mkdir(parents=True)
    (course / "submitted" / "ada" / "week5" / "timestamp.txt").write_text(
        "2026-12-01 08:30:00.000000 UTC")
    with Gradebook(f"sqlite:///{group / 'gradebook.db'}") as gb:
        gb.add_student("ada")
        gb.add_submission("week5", "ada")
        for grade in gb.find_submission("week5", "ada").notebooks[0].grades:
            if grade.cell.name.startswith("ex1_"):  # what autograde stores for passing tests
                grade.auto_score, grade.needs_manual_grade = grade.max_score, False
        gb.db.commit()
    merge(group, ["ada"], 5, course, url)
    merge(group, ["ada"], 5, course, url)  # again: a regraded student replaces, not adds

    with open(export(5, course, postgres_db)) as f:
        [row] = list(csv.DictReader(f))
    assert row["student"] == "ada" and row["autograded"] == "4"
    assert row["autograded_max"] == str(FULL)
    assert row["manual"] == "" and row["manual_state"] == "not yet graded"
    assert row["submitted_at"] == "2026-12-01 08:30:00"
