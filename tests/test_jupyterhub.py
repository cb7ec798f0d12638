"""A class on a real JupyterHub: an instructor and two students, each through their own server.

The hub is ``scripts/hub/jupyterhub_config.py`` (the configuration docs/instructors.md
shows), run from the environment ``make hub-deps`` builds (``course.term.hub``), on
127.0.0.1 with a shared class password, once per branch of that configuration:

- ``real-accounts`` (root, as in CI): each user is a real account, made by the hub for
  this test (names carry a random tag) and deleted afterwards;
- ``one-account``: the hub runs as a normal user (as root, the course's unprivileged
  account; otherwise you), and every user's server runs as that account in a home of
  its own (the accounts are not separated).

1. The instructor, in their own server's formgrader (HTTP, with their token): generates
   week 1 from ``solutions/week1`` and releases it to the shared exchange (the first week a
   class gets, and the quickest to grade: the hub is what is tested here, and week 5's
   class is graded row by row in ``tests/test_class_grading.py``).
2. Each student, through their own server (nbgrader's Assignments endpoints and the
   Jupyter contents API, with their own token): fetches week 1 (no hidden test in it),
   one fills in every answer (the model solutions, as a student would type them; the
   test cells stay as released), the other leaves it blank; both submit.
3. The instructor's formgrader collects, autogrades each submission (the course's own
   preprocessors, imported from the hub environment's ``course``), generates feedback and
   releases it.
4. Each student fetches the feedback through their own server and reads its score: the
   solved notebook has every autograded point (the written answers wait for a person),
   the blank one 0, although a cell of it tries to run the instructor's solutions through
   their path (the formgrader's kernels are sandboxed too); no hidden test and no path of
   the grading machine in either.

Also: students have no formgrader, and a student's token does not open the instructor's
server. Every server, the hub, the proxy and (as root) the accounts are gone afterwards,
even on failure. Seconds per phase: ``test-artifacts/hub/timings-<branch>.txt``.
"""

from __future__ import annotations

import json
import os
import re
import stat
import time
from urllib.parse import quote

import nbformat
import pytest
from hubclass import ARTIFACTS, COURSE_ID, ClassHub, hub_environment, unavailable
from weeks import REPO, autograded_points, graded

from course.host.accounts import NoUnprivilegedAccount, unprivileged_account
from course.term.rubric import read_rubric

pytestmark = [pytest.mark.slow, pytest.mark.hub]

WEEK = "week1"
SOURCE = REPO / "solutions" / WEEK / f"{WEEK}.ipynb"
FULL = autograded_points(SOURCE)
TOTAL = sum(meta["points"] for meta in graded(SOURCE).values())
MARKERS = ("### BEGIN SOLUTION", "### END SOLUTION")


# A student's cell that reads the instructor's source notebook through its path (the
# formgrader grades as the instructor's account, which may read it), runs its solutions
# and prints its hidden tests into the feedback. The sandbox lets it reach neither.
PEEK = """import json
try:
    cells = json.load(open({source!r}))["cells"]
except OSError as error:
    cells = []
    print("no luck:", type(error).__name__)
for cell in cells:
    text = "".join(cell["source"])
    if "BEGIN SOLUTION" in text:
        exec(text)
    if "BEGIN HIDDEN" in text:
        print(text)
"""


def solved(fetched: dict) -> dict:
    """The fetched notebook with every answer cell filled in from the source notebook (its
    solution markers dropped): a student who solved everything. Test cells stay as released."""
    answers = {c.metadata["nbgrader"]["grade_id"]: c.source
               for c in nbformat.read(SOURCE, as_version=4).cells
               if c.metadata.get("nbgrader", {}).get("solution")}
    filled = 0
    for cell in fetched["cells"]:
        meta = cell["metadata"].get("nbgrader", {})
        if meta.get("solution"):
            lines = answers[meta["grade_id"]].splitlines()
            cell["source"] = "\n".join(ln for ln in lines if ln.strip() not in MARKERS)
            filled += 1
    assert filled == len(answers), f"{filled} answer cells in the release, {len(answers)} in source"
    return fetched


def assignments(hub: ClassHub, user: str, action: str | None = None) -> list[dict]:
    """nbgrader's Assignments endpoints on ``user``'s own server (what the Assignments tab
    calls): the list, or an action (fetch, submit, fetch_feedback) and the list after it."""
    if action is None:
        answer = hub.json(user, "GET", f"assignments?course_id={COURSE_ID}")
    else:
        answer = hub.json(user, "POST", f"assignments/{action}",
                          form={"course_id": COURSE_ID, "assignment_id": WEEK})
    assert answer["success"], f"{user} {action}: {answer.get('value')}"
    return [a for a in answer["value"] if a["assignment_id"] == WEEK]


def formgrader(hub: ClassHub, path: str, timeout: float = 120) -> dict:
    """POST to the formgrader API on the instructor's own server; its JSON answer, which
    must report success."""
    answer = hub.json(hub.instructor, "POST", f"formgrader/api/{path}", timeout=timeout)
    assert answer.get("success"), f"formgrader {path}: {answer.get('error') or answer}"
    return answer


class Clock:
    def __init__(self):
        self.start = self.last = time.monotonic()
        self.laps: list[tuple[str, float]] = []

    def lap(self, name: str) -> None:
        now = time.monotonic()
        self.laps.append((name, now - self.last))
        self.last = now

    def write(self, name: str) -> None:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        lines = [f"{lap}: {seconds:.1f} s" for lap, seconds in self.laps]
        lines.append(f"total: {time.monotonic() - self.start:.1f} s")
        (ARTIFACTS / f"timings-{name}.txt").write_text("\n".join(lines) + "\n")
        print("\n".join(lines))


# Real accounts need root; a normal user runs the one-account branch only (as you).
BRANCHES = ["real-accounts", "one-account"] if os.geteuid() == 0 else ["one-account"]


@pytest.fixture(scope="module", params=BRANCHES)
def hub(request):
    """The class hub, once per branch of its configuration: run as root (a real account per
    user), and run as a normal user (one account, a home per user). As root the second runs
    the hub as the course's unprivileged account; as a normal user, as you."""
    account = None
    if request.param == "one-account" and os.geteuid() == 0:
        try:
            account = unprivileged_account()
        except NoUnprivilegedAccount as error:
            unavailable(str(error))
    clock = Clock()
    with hub_environment() as env:
        clock.lap("hub environment ready (make hub-deps)")
        started = ClassHub.start(env, f"class-{request.param}", account=account)
        try:
            started.clock = clock
            clock.lap("hub started")
            yield started
        finally:
            started.stop()
            clock.lap("everything stopped")
            clock.write(request.param)


def test_a_class_releases_fetches_submits_grades_and_returns_feedback_on_jupyterhub(hub):
    clock = hub.clock
    teacher, (ada, bo) = hub.instructor, hub.students
    course = hub.give_course()
    for user in (teacher, ada, bo):
        hub.login(user)
    hub.spawn(teacher, ada, bo)
    clock.lap("three servers started")

    # Only the instructor has the formgrader; a student's token opens no one else's server.
    assert hub.call(ada, "GET", "formgrader/api/assignments")[0] == 404
    assert hub.call(teacher, "GET", "api/contents", as_user=ada)[0] == 403
    names = [a["name"] for a in hub.json(teacher, "GET", "formgrader/api/assignments")]
    assert WEEK in names, names

    # 1. Release to the shared exchange.
    formgrader(hub, f"assignment/{WEEK}/assign", timeout=300)
    formgrader(hub, f"assignment/{WEEK}/release")
    modes = {name: stat.S_IMODE(os.stat(hub.exchange / name).st_mode)
             for name in ("", COURSE_ID, f"{COURSE_ID}/inbound", f"{COURSE_ID}/outbound")}
    assert modes == {"": 0o1777, COURSE_ID: 0o755, f"{COURSE_ID}/inbound": 0o2733,
                     f"{COURSE_ID}/outbound": 0o755}, {k: oct(v) for k, v in modes.items()}
    clock.lap(f"{WEEK} generated and released")

    # 2. Each student fetches and submits through their own server.
    for student in (ada, bo):
        assert [a["status"] for a in assignments(hub, student)] == ["released"]
        assert [a["status"] for a in assignments(hub, student, "fetch")] == ["fetched"]
        model = hub.json(student, "GET", f"api/contents/{WEEK}/{WEEK}.ipynb")
        assert "BEGIN HIDDEN TESTS" not in json.dumps(model["content"])
        if student == ada:
            hub.json(student, "PUT", f"api/contents/{WEEK}/{WEEK}.ipynb", body={
                "type": "notebook", "format": "json", "content": solved(model["content"])})
        else:  # blank, but for a cell that runs the instructor's solutions if it can
            cheat = nbformat.v4.new_code_cell(PEEK.format(source=str(
                course / "solutions" / WEEK / f"{WEEK}.ipynb")))
            model["content"]["cells"].insert(1, json.loads(json.dumps(cheat)))
            hub.json(student, "PUT", f"api/contents/{WEEK}/{WEEK}.ipynb", body={
                "type": "notebook", "format": "json", "content": model["content"]})
        after = assignments(hub, student, "submit")
        assert "submitted" in [a["status"] for a in after], after
    clock.lap("fetched and submitted by both students")

    # 3. Collect, autograde, feedback, release: the instructor's formgrader.
    formgrader(hub, f"assignment/{WEEK}/collect")
    for student in (ada, bo):
        assert (course / "submitted" / student / WEEK / f"{WEEK}.ipynb").is_file()
    clock.lap("collected")
    for student in (ada, bo):
        formgrader(hub, f"submission/{WEEK}/{student}/autograde", timeout=600)
        clock.lap(f"autograded {'the solved' if student == ada else 'the blank'} notebook")
    scores = {s: hub.json(teacher, "GET", f"formgrader/api/submission/{WEEK}/{s}")
              for s in (ada, bo)}
    got = {s: (v["score"], v["max_score"], v["needs_manual_grade"]) for s, v in scores.items()}
    # The written answers of the solved notebook wait for a person; the blank ones score 0.
    assert got == {ada: (FULL, TOTAL, True), bo: (0, TOTAL, False)}, got
    # bo's cell found nothing to read: the formgrader's kernels run in the sandbox.
    peeked = (course / "autograded" / bo / WEEK / f"{WEEK}.ipynb").read_text()
    assert "no luck: FileNotFoundError" in peeked, peeked[:3000]
    # The formgrader grades through the course's steps, rubric included (as make grade).
    graded = (course / "autograded" / ada / WEEK / f"{WEEK}.ipynb").read_text()
    assert graded.count("Rubric for graders") == len(read_rubric(REPO, int(WEEK[4:]))) > 0
    formgrader(hub, f"assignment/{WEEK}/generate_feedback", timeout=300)
    formgrader(hub, f"assignment/{WEEK}/release_feedback")
    feedback = stat.S_IMODE(os.stat(hub.exchange / COURSE_ID / "feedback").st_mode)
    assert feedback == 0o711, oct(feedback)  # students open their own file, list nothing
    clock.lap("feedback generated and released")

    # 4. Each student fetches the feedback through their own server and reads the score.
    for student, points in ((ada, FULL), (bo, 0)):
        [submitted] = [a for a in assignments(hub, student, "fetch_feedback")
                       if a["status"] == "submitted"]
        [submission] = submitted["submissions"]
        assert submission["has_local_feedback"], submission
        folder = quote(submission["local_feedback_path"])  # a timestamp: spaces in it
        html = hub.json(student, "GET", f"api/contents/{folder}/{WEEK}.html?format=text")
        text = html["content"]
        found = re.search(rf"{WEEK} \(Score: ([\d.]+) / ([\d.]+)\)", text)
        assert found, text[:2000]
        assert (float(found[1]), float(found[2])) == (points, TOTAL), (student, found[0])
        assert "BEGIN HIDDEN TESTS" not in text and "Rubric for graders" not in text
        if student == ada:  # bo's own cell names the path it tried
            assert str(course) not in text
    clock.lap("feedback fetched by both students")
