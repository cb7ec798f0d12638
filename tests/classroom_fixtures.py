"""A class of week 5 submissions for the instructor's tests: honest, wrong and hostile.

:func:`build_course` makes a course folder the way an instructor's clone has it
(``nbgrader_config.py``, ``solutions/``, ``rubrics/``); :func:`build_class` fills
``submitted/<student>/week5/`` and returns what each student did.
"""

from __future__ import annotations

import csv
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
from weeks import release_of

REPO = Path(__file__).resolve().parent.parent
SOURCE = REPO / "solutions" / "week5" / "week5.ipynb"
RELEASE = release_of(5)  # as committed: weekN/ is a learner's to edit

CHEAT = '''import course, glob, pathlib, sqlite3
root = pathlib.Path(course.__file__).resolve().parents[1]
stolen = []
for where in [root / "solutions/week5/week5.ipynb", COURSE / "solutions/week5/week5.ipynb"]:
    try:
        stolen.append(where.read_text())
    except OSError as error:
        print("no luck:", error)
try:
    db = sqlite3.connect(COURSE / "gradebook.db")
    db.execute("update grade set auto_score = 99"); db.commit()
except Exception as error:
    print("no luck:", error)
for text in stolen:  # run the instructor's solution cells, if we got them
    import json
    for cell in json.loads(text)["cells"]:
        if "BEGIN SOLUTION" in "".join(cell["source"]):
            exec("".join(cell["source"]))
'''
OUTSIDE = '''for target in [COURSE / "planted.txt", "/etc/planted.txt", "/root/planted.txt"]:
    try:
        open(target, "w").write("I was here")
    except OSError as error:
        print("no luck:", error)
'''

# Another copy of the course at a world-readable path (another instructor's clone, a
# download): its solutions, run as one's own.
CLONE = '''import json, pathlib
for where in [CLONE / "solutions/week5/week5.ipynb"]:
    try:
        for cell in json.loads(where.read_text())["cells"]:
            if "BEGIN SOLUTION" in "".join(cell["source"]):
                exec("".join(cell["source"]))
    except OSError as error:
        print("no luck:", error)
'''
# Look for a classmate's kernel (its command line names its connection file) and run
# code in it, to copy an answer back.
SNOOP = '''import json, os, pathlib
found = []
for pid in [p for p in os.listdir("/proc") if p.isdigit() and int(p) != os.getpid()]:
    try:
        argv = pathlib.Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\\0")
    except OSError:
        continue
    mine = os.getcwd()  # its own kernel's file (the sandbox's command line names it too)
    files = [a.decode() for a in argv if a.endswith(b".json") and mine not in a.decode()]
    for name in files:
        try:
            info = json.loads(pathlib.Path(f"/proc/{pid}/root{name}").read_text())
        except (OSError, ValueError):
            continue
        from jupyter_client import BlockingKernelClient
        client = BlockingKernelClient()
        client.load_connection_info(info)
        client.start_channels()
        reply = client.execute_interactive("import inspect; print(charge_key)", timeout=5)
        found.append((pid, reply["content"]["status"]))
print("classmates found:", found)
'''
# Rewire the kernel so that no later cell can fail, and hide what it prints on stderr.
# An AST transformer that wraps every cell in ``try: ... except BaseException: pass``.
SWALLOW = '''import ast
class Swallow(ast.NodeTransformer):
    def visit_Module(self, node):
        catch = ast.ExceptHandler(type=ast.Name("BaseException", ast.Load()), name=None,
                                  body=[ast.Pass()])
        return ast.fix_missing_locations(ast.Module(
            body=[ast.Try(body=node.body or [ast.Pass()], handlers=[catch], orelse=[],
                          finalbody=[])], type_ignores=[]))
'''
NEUTER = SWALLOW + '''import io, sys
get_ipython().ast_transformers.append(Swallow())
sys.stderr = io.StringIO()
'''
# A glob of the hidden folders, through the package's own path.
GLOB = '''import course, pathlib
root = pathlib.Path(course.__file__).resolve().parents[1]
print(sorted(root.glob("solutions/*/*.ipynb")), (root / "rubrics").is_dir())
'''


# What a notebook may not take from the grading machine (course/sandbox/limits.py): each
# is a cell of its own, before an honest solution.
MEMORY_BOMB = "_hog = bytearray(30 * 2**30)  # 30 GB\n"
FORK_BOMB = "import os\nwhile True:\n    os.fork()\n"
OUTPUT_FLOOD = "while True:\n    print('x' * 1_000_000)\n"
DISK_FILLER = ("import os\nfor _i in range(100_000):\n    with open(f'fill-{_i}.bin', 'wb') as _f:"
               "\n        _f.write(os.urandom(1 << 20) * 64)\n")


def grade_week5(course: Path, *, budget: int, timeout: int,
                ) -> tuple[subprocess.CompletedProcess, dict[str, dict[str, str]]]:
    """``make grade WEEK=5`` with 2 workers over ``course``'s submissions (each notebook
    ``budget`` seconds, each cell ``timeout``): the run and ``grades/week5.csv`` by student."""
    env = {**os.environ, "COURSE_NOTEBOOK_BUDGET": str(budget)}
    done = subprocess.run(
        [sys.executable, "-m", "course.term.instructor", "grade", "--week", "5",
         "--workers", "2", "--timeout", str(timeout), "--repo", str(course)],
        capture_output=True, text=True, env=env, timeout=1500)
    with open(course / "grades" / "week5.csv") as f:
        rows = {row["student"]: row for row in csv.DictReader(f)}
    return done, rows


def build_course(target: Path) -> Path:
    target.mkdir(parents=True, exist_ok=True)
    shutil.copy2(REPO / "nbgrader_config.py", target / "nbgrader_config.py")
    for folder in ("solutions", "rubrics"):
        shutil.copytree(REPO / folder, target / folder)
    return target


def _nb(path: Path):
    return nbformat.read(path, as_version=4)


def _by_id(nb, grade_id: str) -> int:
    return next(i for i, c in enumerate(nb.cells)
                if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)


def _submit(course: Path, student: str, nb=None, raw: str | None = None) -> None:
    folder = course / "submitted" / student / "week5"
    folder.mkdir(parents=True)
    (folder / "timestamp.txt").write_text("2026-12-01 09:00:00.000000 UTC")
    if raw is not None:
        (folder / "week5.ipynb").write_text(raw)
    else:
        nbformat.write(nb, folder / "week5.ipynb")


def another_clone(target: Path) -> Path:
    """A copy of the course's week 5 solutions that every account may read."""
    target.mkdir(parents=True)
    target.chmod(0o755)
    shutil.copytree(SOURCE.parent, target / "solutions" / "week5")
    return target


def build_class(course: Path, clone: Path | None = None) -> dict[str, str]:
    """Every student of the test class, with what their submission does. ``clone``: a
    world-readable copy of the course's solutions (default: beside ``course``)."""
    clone = clone or another_clone(course.parent / "another-clone")
    solution, blank = _nb(SOURCE), _nb(RELEASE)
    students = {}

    def submit(name: str, what: str, nb=None, raw=None):
        _submit(course, name, nb, raw)
        students[name] = what

    submit("alice", "the solution", solution)
    submit("bob", "the blank release", blank)
    half = _nb(SOURCE)
    for grade_id in ("ex5_guarded", "ex6_outbox", "ex7_graph"):
        half.cells[_by_id(half, grade_id)] = blank.cells[_by_id(blank, grade_id)]
    submit("carol", "exercises 1-4 done, 5-7 not", half)
    wrong = _nb(SOURCE)
    cell = wrong.cells[_by_id(wrong, "ex2_charge")]
    cell.source += "\n\nimport uuid\n_old_key = charge_key\ndef charge_key(state):\n" \
                   "    return _old_key(state) + uuid.uuid4().hex[:6]\n"
    submit("dave", "a charge key with randomness in it", wrong)
    looping = _nb(SOURCE)
    cell = looping.cells[_by_id(looping, "ex2_charge")]
    # A loop that waits (as for a settlement that never comes) rather than spins: the
    # budget stops both alike (test_grading_pieces stops spinning loops), and a spinning
    # one here would burn a core of the test machine for the whole 30-second budget.
    cell.source += ("\n\nimport time\ndef charge_key(state):\n    while True:  # waits for "
                    "the charge to settle\n        time.sleep(0.05)\n")
    submit("erin", "charge_key (called by many tests) waits forever", looping)
    broken = _nb(SOURCE)
    broken.cells[_by_id(broken, "ex1_answer")].source = "WRITES = {'refund': False,"
    submit("frank", "a syntax error in exercise 1", broken)
    deleted = _nb(SOURCE)
    del deleted.cells[_by_id(deleted, "ex1_hidden")]
    del deleted.cells[_by_id(deleted, "ex1_shape")]
    submit("grace", "the solution with exercise 1's test cells deleted", deleted)
    edited = _nb(RELEASE)
    edited.cells[_by_id(edited, "ex1_shape")].source = "# Exercise 1\npass"
    edited.cells[_by_id(edited, "ex2_test_resume_does_not_double_charge")].source = "pass"
    submit("heidi", "the blank release with two test cells emptied", edited)
    exits = _nb(SOURCE)
    exits.cells.insert(_by_id(exits, "ex1_flow"), nbformat.v4.new_code_cell(
        "import sys\nsys.exit('bye')"))
    submit("ivan", "the solution with sys.exit() in a cell", exits)
    dies = _nb(RELEASE)
    dies.cells.insert(2, nbformat.v4.new_code_cell("import os\nos._exit(3)"))
    submit("judy", "os._exit() kills the kernel", dies)
    submit("kim", "a notebook that is not valid JSON", raw='{"cells": [oops')
    course_line = f"import pathlib\nCOURSE = pathlib.Path({str(course)!r})\n"
    cheat = _nb(RELEASE)
    cheat.cells.insert(1, nbformat.v4.new_code_cell(course_line + CHEAT))
    submit("mallory", "reads the solutions and edits the gradebook", cheat)
    outside = _nb(RELEASE)
    outside.cells.insert(1, nbformat.v4.new_code_cell(course_line + OUTSIDE))
    submit("niaj", "writes outside its folder", outside)
    for name, code, what in [
            ("oscar", CLONE, "runs the solutions of another clone of the course"),
            ("peggy", SNOOP, "looks for a classmate's kernel and runs code in it"),
            ("trent", NEUTER, "an AST transformer swallows every error; stderr captured"),
            ("victor", GLOB, "globs the hidden folders")]:
        nb = _nb(RELEASE)
        nb.cells.insert(1, nbformat.v4.new_code_cell(
            f"import pathlib\nCLONE = pathlib.Path({str(clone)!r})\n{code}"))
        submit(name, what, nb)
    for name, code, what in [
            ("uma", DISK_FILLER, "the solution, after a cell that fills its folder"),
            ("xavier", MEMORY_BOMB, "the solution, after a cell that allocates 30 GB"),
            ("yvonne", FORK_BOMB, "the solution, after a fork bomb"),
            ("zoe", OUTPUT_FLOOD, "the solution, after a cell that prints without end")]:
        nb = _nb(SOURCE)
        nb.cells.insert(1, nbformat.v4.new_code_cell(code))
        submit(name, what, nb)
    delegating = _nb(SOURCE)
    delegating.cells[_by_id(delegating, "ex5_guarded")].source = (
        "from course.durable import guarded as _theirs\n\n\n"
        "def guarded(session_id, step, fn, args, *, store):\n"
        "    return _theirs(session_id, step, fn, args, store=store)\n")
    submit("wendy", "the solution, but exercise 5 calls the course's guarded", delegating)
    return students
