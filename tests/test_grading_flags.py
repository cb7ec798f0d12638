"""The static flagger (course/grader/flags.py): it fires on no solution, no release cell
and no known answer of any week, right or wrong, and on each way of reaching into the
grading machinery that issue 43 found (and their obvious variants).

No known answer is flagged: the two that hand an exercise to the course's own reference
(week 5's ``ex5_calls_the_courses_guarded``, ``ex3_imports_the_courses_email``...) are
caught by the reference watch (course/sandbox/references.py), not by this flagger, since
importing the course is what every exercise does.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from course.grader.declaration import load
from course.grader.flags import flags, notebook_flags
from course.grader.known_answers import answers

REPO = Path(__file__).resolve().parent.parent
WEEKS = sorted(int(p.name[4:]) for p in (REPO / "solutions").glob("week*")
               if (p / f"{p.name}.ipynb").is_file())


@pytest.mark.parametrize("week", WEEKS)
def test_no_solution_release_or_known_answer_is_flagged(week):
    source = nbformat.read(REPO / "solutions" / f"week{week}" / f"week{week}.ipynb",
                           as_version=4)
    release = nbformat.read(REPO / f"week{week}" / f"week{week}.ipynb", as_version=4)
    solved = [c.source for c in source.cells if c.cell_type == "code"
              and c.metadata.get("nbgrader", {}).get("solution")]
    assert solved and all(flags(text) == [] for text in solved)
    assert notebook_flags(source, source) == []  # every cell a student could write
    assert notebook_flags(release, source) == []
    known = answers(load(week, REPO))
    assert known, f"week {week} has no known answers"
    flagged = {(name, cell): flags(text) for name, answer in known.items()
               for cell, text in answer.cells.items() if flags(text)}
    assert flagged == {}


def test_the_solutions_own_demo_cells_are_not_flagged_even_if_copied_into_an_answer():
    """A learner copies the lesson's demo code (``import inspect`` to print a node's
    source; week 7's ``CLAUDE_CONFIG_DIR`` for the SDK): not flagged as code of the release
    where it stands, and the environment variable an exercise needs is never flagged."""
    assert flags('import os\nos.environ["CLAUDE_CONFIG_DIR"] = "x"\n'
                 'os.environ.pop("CLAUDE_CONFIG_DIR", None)') == []
    assert flags("from course.grading import kill_self, run_forked, count_runs") == []


ATTACKS = {
    "the guard's secret from its closure": (
        "import sys\ncheck = next(v for k, v in vars(sys).items()\n"
        "             if k.startswith('_grading_check'))\n"
        "secret = check.__closure__[0].cell_contents", "__closure__"),
    "the kernel's do_execute wrapped": (
        "kernel = get_ipython().kernel\nold = kernel.do_execute\n"
        "kernel.do_execute = lambda *a, **k: old(*a, **k)", "get_ipython"),
    "the session's send wrapped, found without get_ipython": (
        "import ipykernel.kernelapp as ka\napp = ka.IPKernelApp.instance()\n"
        "app.session.send = lambda *a, **k: None", "ipykernel"),
    "an event callback with a forged __module__": (
        "def hook(*args):\n    pass\nhook.__module__ = 'matplotlib.pyplot'", "__module__"),
    "a simulator's method replaced": (
        "from course.billing import BillingSimulator\n"
        "BillingSimulator.charge = lambda self, *a, **k: None", "BillingSimulator.charge"),
    "a harness's method replaced through setattr": (
        "import course.crash.harness as harness\nsetattr(harness, 'run', print)", "setattr"),
    "a method replaced through type()": ("type(world.billing).charge = print", "type("),
    "PYTHONPATH to a sitecustomize": (
        "import os, pathlib\npathlib.Path('sitecustomize.py').write_text('print(1)')\n"
        "os.environ['PYTHONPATH'] = os.getcwd()", "sitecustomize"),
    "os.putenv": ("import os\nos.putenv('PYTHONSTARTUP', 'x.py')", "os.putenv"),
    "an environ alias": ("from os import environ as e\ne.update(LD_PRELOAD='x.so')",
                         "os.environ.update"),
    "exec of a built string": ("code = ''.join(parts)\nexec(code)", "exec"),
    "__import__ of a built name": ("m = __import__('co' + 'urse')", "__import__"),
    "import_module of a built name": ("import importlib\nimportlib.import_module(name)",
                                      "import_module"),
    "frames": ("import sys\ncaller = sys._getframe(1).f_back.f_globals", "sys._getframe"),
    "gc": ("import gc\nchecks = gc.get_referrers(x)", "gc"),
    "inspect": ("from inspect import getclosurevars", "inspect"),
    "ctypes": ("import ctypes\nctypes.pythonapi.PyFrame_LocalsToFast", "ctypes"),
    "sys.settrace": ("import sys\nsys.settrace(None)", "sys.settrace"),
    "sys.meta_path": ("import sys\nsys.meta_path.insert(0, Finder())", "sys.meta_path"),
    "sys.modules assignment": ("import sys\nsys.modules['course.billing'] = fake",
                               "sys.modules"),
    "the grader's modules": ("from course.sandbox.intact import proof", "course.sandbox"),
    "the grader through the package": ("import course\ncourse.sandbox.notes.note = print",
                                       "course.sandbox"),
    "the grader's floor as a name": ("from course import term", "course.term"),
    "the helpers' insides": ("import course.grading.checks as c\nc.run_forked = None",
                             "course.grading.checks"),
    "an IPython magic that sets the environment": ("%env PYTHONPATH=/tmp", "%env"),
}


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_each_way_into_the_grading_machinery_is_named(name):
    source, named = ATTACKS[name]
    found = flags(source)
    assert any(named in line for line in found), (name, found)
