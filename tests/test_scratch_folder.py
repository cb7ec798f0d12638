"""A notebook's temporary files do not outlive it: not in JupyterLab, not when graded.

Every week's notebook keeps its worlds in ``LAB = scratch_folder("weekN")``
(:mod:`course.base.scratch`). A kernel shut down the usual way removes it; grading shuts
kernels down at once, so :class:`course.sandbox.execute.GradingExecute` gives each
kernel a ``TMPDIR`` of the notebook's own and removes it afterwards; the Validate button
(nbgrader's own Execute) shuts its kernel down gracefully. Before these, each
run left a few megabytes in ``/tmp``: 18 GB on the test machine after a day of runs.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from traitlets.config import PyFileConfigLoader

from course.grader.validate import CourseValidator
from course.sandbox.execute import GradingExecute

REPO = Path(__file__).resolve().parent.parent

MAKE_AND_FORK = """
from course.base import scratch_folder
from course.grading import run_forked
LAB = scratch_folder("scratch-test")
(LAB / "world.db").write_text("a world")
print(run_forked(lambda: (LAB / "from-a-worker.txt").write_text("x")))
print(LAB)
"""


def last_line(cell) -> str:
    """The last line a cell printed."""
    return "".join(o.get("text", "") for o in cell.outputs).strip().splitlines()[-1]


def test_a_kernel_shut_down_as_jupyterlab_does_removes_its_scratch_folder(tmp_path):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(MAKE_AND_FORK)])
    NotebookClient(nb, kernel_name="python3", shutdown_kernel="graceful",
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    said = "".join(o.get("text", "") for o in nb.cells[0].outputs)
    assert "exit 0" in said, said  # the worker ran, wrote in the folder and exited
    assert not Path(last_line(nb.cells[0])).exists()


def test_a_forked_worker_that_exits_leaves_the_folder_to_the_process_that_made_it():
    script = """
import json, os, sys
from course.base import scratch_folder
folder = scratch_folder("scratch-test")
pid = os.fork()
if pid == 0:
    sys.exit(0)  # a normal exit: the worker runs the exit handlers it inherited
os.waitpid(pid, 0)
print(json.dumps([str(folder), folder.is_dir()]))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    folder, there_after_the_worker = json.loads(done.stdout)
    assert there_after_the_worker, "the worker's exit removed its parent's scratch folder"
    assert not Path(folder).exists(), "the folder outlived the process that made it"


def test_grading_leaves_no_temporary_folder_behind(tmp_path):
    """Shut down at once, with a worker still running: no exit handler runs, and still
    the kernel's temporary folder and everything in it are gone."""
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell(MAKE_AND_FORK),
        nbformat.v4.new_code_cell("import os, tempfile, time\n"
                                  "if os.fork() == 0:\n    time.sleep(600)\n"
                                  "print(tempfile.gettempdir())"),
    ])
    GradingExecute(timeout=60, allow_errors=True, shutdown_kernel="immediate").preprocess(
        nb, {"metadata": {"path": str(tmp_path)}})
    kernel_tmp, lab = Path(last_line(nb.cells[1])), Path(last_line(nb.cells[0]))
    assert kernel_tmp != Path("/tmp") and lab.parent == kernel_tmp
    assert not kernel_tmp.exists() and not lab.exists()


def test_the_validate_button_leaves_no_scratch_folder(tmp_path):
    """What a student's Validate runs (the course's validator), with the course's config."""
    where = tmp_path / "lab.txt"
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        f"{MAKE_AND_FORK}\nopen({str(where)!r}, 'w').write(str(LAB))")])
    nbformat.write(nb, tmp_path / "week9.ipynb")
    config = PyFileConfigLoader("nbgrader_config.py", path=str(REPO)).load_config()
    CourseValidator(config=config).validate(str(tmp_path / "week9.ipynb"))
    lab = Path(where.read_text())
    assert lab.name.startswith("scratch-test-") and not lab.exists()
