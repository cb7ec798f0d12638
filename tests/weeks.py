"""Helpers the course's tests share: notebooks, throwaway courses, background processes.

What a week is lives in its declaration (``solutions/weekN/week.toml``,
:mod:`course.grader.declaration`); the checks every week gets are :mod:`week_checks`,
collected by ``tests/conftest.py`` into every ``tests/test_weekN.py``; their one grading
run is :mod:`week_pipeline`; which answers it grades how, :mod:`week_answers`.
"""

from __future__ import annotations

import atexit
import functools
import json
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

import nbformat
import pytest

from course.host.checkout import committed_bytes

REPO = Path(__file__).resolve().parent.parent

GRADE_IN_A_PROCESS = """
import json, sys
from pathlib import Path
from course.grader import autograde as grading
week, repo, timeout_s, folders = json.loads(sys.argv[1])
reports = grading.grade(week, {k: Path(v) for k, v in folders.items()}, repo=Path(repo),
                        timeout_s=timeout_s)
print("REPORTS " + json.dumps({name: {
    "summary": r.summary(), "earned": r.earned, "lines": r.lines(),
    "kernel_died": r.kernel_died,
    "failed": {t.grade_id: {"message": t.message, "timed_out": t.timed_out,
                            "points": t.points} for t in r.failed()},
} for name, r in reports.items()}))
"""

NBGRADER_WARNINGS = [  # ``pytestmark`` of a week's module: from nbgrader's own code (the
    # gradebook, re-added cells), harmless
    pytest.mark.filterwarnings("ignore:Object of type <Submitted:sqlalchemy.exc.SAWarning"),
    pytest.mark.filterwarnings("ignore::nbformat.warnings.MissingIDFieldWarning"),
]


# ------------------------------------------------------------------ notebooks and courses
def nbgrader_cell(source: str, **meta) -> nbformat.NotebookNode:
    """A code cell with nbgrader metadata (``grade=True, points=2, grade_id=...`` etc.)."""
    made = nbformat.v4.new_code_cell(source)
    made.metadata["nbgrader"] = {"schema_version": 3, "task": False, "locked": False,
                                 "grade": False, "solution": False, **meta}
    return made


def tiny_course(root: Path, week: int, cells: list, declaration: str) -> Path:
    """A throwaway course at ``root``: ``solutions/week<week>/week<week>.ipynb`` made of
    ``cells``, its ``week.toml`` (``declaration``, TOML) and the repository's
    ``nbgrader_config.py``. Returns ``root``."""
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": {
        "name": "python3", "display_name": "Python 3", "language": "python"}})
    nb.cells = cells
    folder = root / "solutions" / f"week{week}"
    folder.mkdir(parents=True)
    nbformat.write(nb, folder / f"week{week}.ipynb")
    (folder / "week.toml").write_text(declaration)
    (root / "nbgrader_config.py").write_text((REPO / "nbgrader_config.py").read_text())
    return root


def cells(path: Path) -> list:
    return nbformat.read(path, as_version=4).cells


def graded(path: Path) -> dict[str, dict]:
    """``{grade_id: nbgrader metadata}`` of every graded cell (tests and written answers)."""
    return {c.metadata["nbgrader"]["grade_id"]: c.metadata["nbgrader"] for c in cells(path)
            if c.metadata.get("nbgrader", {}).get("grade")}


def autograded_points(path: Path) -> float:
    return sum(g["points"] for g in graded(path).values() if not g["solution"])


def code_cells_with_outputs(path: Path) -> list[str]:
    """The first line of every code cell that carries an output or an execution count."""
    return [c.source[:60] for c in cells(path)
            if c.cell_type == "code" and (c.outputs or c.execution_count is not None)]


def submission(source: Path, target: Path, edits: Mapping[str, str]) -> Path:
    """A submission folder made from the solution notebook with some cells replaced:
    ``{grade_id: new source}``. Every grade id must exist and change its cell."""
    nb = nbformat.read(source, as_version=4)
    found = set()
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in edits:
            assert edits[grade_id] != cell.source, f"the answer for {grade_id} changes nothing"
            cell.source = edits[grade_id]
            found.add(grade_id)
    assert found == set(edits), f"no such cells: {set(edits) - found}"
    target.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, target / source.name)
    return target


def source_of(week: int) -> Path:
    return REPO / "solutions" / f"week{week}" / f"week{week}.ipynb"


def release_of(week: int) -> Path:
    """Week ``week``'s release as committed: ``weekN/weekN.ipynb`` is a learner's to edit,
    so where the working copy differs from git's HEAD, the committed file is written to a
    folder of this process's and that is returned (outside a checkout: the file itself)."""
    path = REPO / f"week{week}" / f"week{week}.ipynb"
    committed = committed_bytes(REPO, path.relative_to(REPO).as_posix())
    if committed is None or (path.is_file() and path.read_bytes() == committed):
        return path
    pristine = _pristine_folder() / f"week{week}" / path.name
    pristine.parent.mkdir(parents=True, exist_ok=True)
    pristine.write_bytes(committed)
    return pristine


@functools.cache
def _pristine_folder() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="course-committed-releases-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder


def errors_in(executed: Path) -> list[tuple[str, str, str]]:
    """(cell start, error name, message) of every error output in an executed notebook."""
    return [(c.source[:50], o.get("ename"), o.get("evalue"))
            for c in cells(executed) for o in c.get("outputs", [])
            if o.get("output_type") == "error"]


def output_text(executed: Path) -> str:
    """Everything an executed notebook printed or displayed, one cell after another. A
    cell's printed text is joined as printed: a busy kernel may deliver one ``print`` line
    in several stream chunks, so chunks are not separated."""
    parts = []
    for cell in cells(executed):
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream":
                parts.append(output.get("text", ""))
            else:
                parts.append("\n" + json.dumps(output.get("data", {})) + "\n")
        parts.append("\n")
    return "".join(parts)


# ------------------------------------------------------------------ background processes
RUN_PROBE = """
import sys
from pathlib import Path
import nbformat
from nbclient import NotebookClient
path = Path(sys.argv[1])
nb = nbformat.read(path, as_version=4)
try:
    NotebookClient(nb, timeout=1800, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute()
finally:
    nbformat.write(nb, path)
"""

# nbgrader's time limit per cell, which the forked checks apply too
CELL_TIMEOUT_S = float(re.search(r"^TIMEOUT_S = (\d+)", (REPO / "nbgrader_config.py").read_text(),
                                 re.M).group(1))


def start(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, *args], cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def start_make_check(week: int) -> subprocess.Popen:
    """What ``make check WEEK=<week>`` runs, on the committed release, in the background."""
    folder = release_of(week).parent
    return start("-m", "course.grader", "--week", str(week),
                 *(["--submission", str(folder)] if folder != REPO / f"week{week}" else []))


def grade_in_a_process(week: int, folders: dict[str, Path], repo: Path = REPO,
                       timeout_s: int | None = None) -> subprocess.Popen:
    job = json.dumps([week, str(repo), timeout_s, {k: str(v) for k, v in folders.items()}])
    return start("-c", GRADE_IN_A_PROCESS, job)


def finish(jobs: dict[str, subprocess.Popen], timeout_s: float = 600) -> dict:
    """Wait for background jobs; ``{name: CompletedProcess}``. Kills any left running."""
    done = {}
    try:
        for name, job in jobs.items():
            out, err = job.communicate(timeout=timeout_s)
            done[name] = subprocess.CompletedProcess(job.args, job.returncode, out, err)
    finally:
        for job in jobs.values():
            if job.poll() is None:
                job.kill()
    return done


def reports_of(done: subprocess.CompletedProcess) -> dict:
    line = next((ln for ln in done.stdout.splitlines() if ln.startswith("REPORTS ")), None)
    assert line, done.stderr[-3000:]
    return json.loads(line.removeprefix("REPORTS "))


def nbgrader_state_in_repo() -> dict[str, float | None]:
    names = ("gradebook.db", "submitted", "autograded", "feedback")
    return {n: (REPO / n).stat().st_mtime if (REPO / n).exists() else None for n in names}
