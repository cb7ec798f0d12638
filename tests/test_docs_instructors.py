"""docs/instructors.md and the README's instructor section match the code: every ``make``
target they name exists, the README's commands are the guide's, and (slow) the guide's
``bash`` blocks run literally, in order, on a fresh copy of the repository: nbgrader's
whole exchange path (release, fetch, submit, collect, grade, grading by hand, feedback,
return, fetch_feedback) with what each step must leave checked between the lines."""

from __future__ import annotations

import csv
import os
import pwd
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from course.host.checkout import copy_tracked

REPO = Path(__file__).resolve().parent.parent
GUIDE = REPO / "docs" / "instructors.md"
STUDENT_MARK = "*As a student*"


def blocks(text: str) -> list[tuple[bool, list[str]]]:
    """``(run as a student?, command lines)`` for every bash block, in order; a block is
    a student's when the paragraph before it starts with *As a student*."""
    found = []
    for match in re.finditer(r"```bash\n(.*?)```", text, re.S):
        before = text[:match.start()].rstrip().split("\n\n")[-1]
        lines = [ln for ln in match.group(1).splitlines() if ln.strip()]
        found.append((before.lstrip().startswith(STUDENT_MARK), lines))
    return found


def readme_instructor_commands() -> list[str]:
    text = (REPO / "README.md").read_text()
    section = text[text.index("## For instructors"):]
    section = section[:section.index("\n## ", 4)]
    return [line for _, lines in blocks(section) for line in lines]


def make_targets() -> set[str]:
    targets = set()
    for line in (REPO / "Makefile").read_text().splitlines():
        match = re.match(r"^([a-z][a-z -]*):(?!=)", line) or re.match(
            r"^\.PHONY:(.*)", line)
        if match:
            targets.update(match.group(1).split())
    return targets


def test_every_make_command_in_the_docs_exists():
    text = GUIDE.read_text() + (REPO / "README.md").read_text()
    named = set(re.findall(r"(?:`|^)make ([a-z][a-z-]*)", text, re.M))
    assert named - make_targets() == set()


def test_make_help_lists_every_target_the_docs_name():
    """``make help`` says it lists every command: each target the README or a guide in
    docs/ names is on one of its lines, and every target it lists exists."""
    text = (REPO / "README.md").read_text() + "".join(
        p.read_text() for p in sorted((REPO / "docs").glob("*.md")))
    named = set(re.findall(r"(?:`|^)make ([a-z][a-z-]*)", text, re.M))
    done = subprocess.run(["make", "--no-print-directory", "help"], cwd=REPO,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    listed = set(re.findall(r"(?:^|\s)make ([a-z][a-z-]*)", done.stdout, re.M))
    assert named - listed == set(), f"named in the docs, not in make help: {named - listed}"
    unknown = listed - make_targets()
    assert unknown == set(), f"make help lists no such target: {unknown}"


def test_the_readme_gives_the_guides_commands():
    guide = {line.split(" ANYWAY")[0] for _, lines in blocks(GUIDE.read_text())
             for line in lines}
    readme = readme_instructor_commands()
    assert readme and set(readme) <= guide, set(readme) - guide


def test_the_guides_hub_configuration_is_the_file_the_hub_test_starts():
    from course.term.hub import CONFIG

    text = GUIDE.read_text()
    hub = text[text.index("## A class on JupyterHub"):text.index("## Zero to JupyterHub")]
    [shown] = re.findall(r"```python\n(.*?)```", hub, re.S)
    in_file = {line.strip() for line in (REPO / CONFIG).read_text().splitlines()}
    missing = [line for line in shown.splitlines() if line.strip() not in in_file]
    assert missing == [], f"shown in the guide, not in {CONFIG}: {missing}"
    assert "```bash" not in text[text.index("## A class on JupyterHub"):], (
        "the hub and Kubernetes sections are configuration: the docs test must not run them")


def test_git_ignores_every_grading_artefact():
    inside = subprocess.run(["git", "rev-parse", "--is-inside-work-tree"], cwd=REPO,
                            capture_output=True, text=True)
    if inside.stdout.strip() != "true":
        pytest.skip("not a git checkout (a copy of the files): nothing for git to ignore")
    names = ["gradebook.db", "grades.csv", "grades/week5.csv", "submitted/a/week5/x.ipynb",
             "autograded/a/week5/x.ipynb", "feedback/a/week5/x.html", "exchange/x",
             "downloaded/week5/archive/submissions.zip"]
    done = subprocess.run(["git", "check-ignore", *names], cwd=REPO, capture_output=True,
                          text=True)
    assert done.stdout.split() == names


def fresh_clone(target: Path) -> Path:
    """The git-tracked files (a fresh clone), with a ``.venv`` that is this interpreter's
    environment seen from the clone (``make setup`` has nothing left to do)."""
    copy_tracked(REPO, target)
    venv, shared = target / ".venv", Path(sys.prefix)
    (venv / "bin").mkdir(parents=True)
    for item in (shared / "bin").iterdir():
        (venv / "bin" / item.name).symlink_to(item)
    for name in ("lib", "lib64", "include", "share", "etc"):
        if (shared / name).exists():
            (venv / name).symlink_to(shared / name)
    shutil.copy2(shared / "pyvenv.cfg", venv / "pyvenv.cfg")
    (venv / ".installed").touch()
    return target


def written_answers_graded_by_hand(clone: Path, student_id: str) -> None:
    """What the Formgrader saves when a grader scores the written answers (the guide's
    prose step between `make grade` and `make feedback`): 5 of the 6 points."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{clone / 'gradebook.db'}") as gb:
        for name, points in {"reflection_1": 2, "reflection_2": 1, "reflection_3": 2}.items():
            grade = gb.find_grade(name, "week5", "week5", student_id)
            grade.manual_score = points
            grade.needs_manual_grade = False
        gb.db.commit()


@pytest.mark.slow
def test_the_guides_commands_run_literally_on_a_fresh_clone(tmp_path):
    """The guide's bash blocks, literally and in order: release, the exchange, collect,
    grade, feedback, return, export, the student's fetch_feedback, the student edition.
    Between the lines, what the guide leaves to people: the student solves every exercise,
    the instructor tries to return feedback before the written answers are graded (refused),
    then grades them by hand. The student's fetched feedback has the right score and
    neither a hidden test nor a rubric."""
    from weeks import autograded_points

    full = int(autograded_points(REPO / "solutions" / "week5" / "week5.ipynb"))
    clone = fresh_clone(tmp_path / "clone")
    exchange, home = tmp_path / "exchange", tmp_path / "ada"
    home.mkdir()
    (home / "nbgrader_config.py").write_text(
        "c = get_config()\nc.CourseDirectory.course_id = 'crash-resume'\n"
        f"c.Exchange.root = {str(exchange)!r}\n")
    base = {k: v for k, v in os.environ.items()
            if not k.startswith(("COURSE_", "VIRTUAL_ENV", "PYTHONPATH"))}
    teacher = {**base, "COURSE_EXCHANGE": str(exchange), "PYTHONPATH": str(clone)}
    student = {**base, "HOME": str(home), "USER": "ada", "LOGNAME": "ada",
               "PATH": f"{clone / '.venv' / 'bin'}{os.pathsep}{base['PATH']}"}
    student_id = pwd.getpwuid(os.getuid()).pw_name  # nbgrader names it after the login

    def handed_out(_done):
        assert (exchange.stat().st_mode & 0o1777) == 0o1777  # every account can drop in it

    def fetched(_done):
        notebook = home / "week5" / "week5.ipynb"
        assert "### BEGIN HIDDEN TESTS" not in notebook.read_text()
        shutil.copy(REPO / "solutions" / "week5" / "week5.ipynb", notebook)  # all solved

    def collected(done):
        assert student_id in done.stdout, done.stdout
        assert (clone / "submitted" / student_id / "week5" / "week5.ipynb").is_file()

    def graded(done):
        assert f"{student_id}: week5: {full}/{full} autograded" in done.stdout, done.stdout
        refused = subprocess.run(["make", "return-feedback", "WEEK=5"], cwd=clone, env=teacher,
                                 capture_output=True, text=True, timeout=600)
        assert refused.returncode != 0
        assert f"{student_id}: written answers not graded yet" in refused.stderr
        written_answers_graded_by_hand(clone, student_id)

    def exported(_done):
        with open(clone / "grades" / "week5.csv") as f:
            [row] = list(csv.DictReader(f))
        assert row["student"] == student_id and row["manual"] == "5", row
        assert row["manual_state"] == "graded" and row["total_so_far"] == str(full + 5), row

    def rostered(done):
        assert "3 student(s)" in done.stdout, done.stdout

    def feedback_fetched(_done):
        [html] = (home / "week5" / "feedback").glob("*/week5.html")
        text = html.read_text()
        assert f"week5 (Score: {full + 5}.0 / {full + 6}.0)" in text, text[:3000]
        assert "BEGIN HIDDEN TESTS" not in text and "Rubric for graders" not in text

    after = {"make roster FILE=docs/example-roster.csv": rostered,
             "make to-students WEEK=5": handed_out, "nbgrader fetch_assignment week5": fetched,
             "make collect WEEK=5": collected, "make grade WEEK=5": graded,
             "make export WEEK=5": exported, "nbgrader fetch_feedback week5": feedback_fetched}
    ran = []
    for as_student, lines in blocks(GUIDE.read_text()):
        for line in lines:
            if line.lstrip().startswith("#"):
                continue
            done = subprocess.run(["bash", "-c", line], cwd=home if as_student else clone,
                                  env=student if as_student else teacher,
                                  capture_output=True, text=True, timeout=1200)
            assert done.returncode == 0, f"{line}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
            after.get(line.strip(), lambda _done: None)(done)
            ran.append(line.strip())
    assert set(after) <= set(ran), f"the guide no longer runs {sorted(set(after) - set(ran))}"
    edition = tmp_path / "crash-course-students"
    assert (edition / "week5" / "week5.ipynb").is_file() and not (edition / "solutions").exists()
