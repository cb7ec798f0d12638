"""Each solution notebook executed headless versus an empty notebook.

Both go through the same path a grader uses: ``nbclient`` starts a fresh
``python3`` kernel, runs every cell and shuts the kernel down. The empty
notebook is pure overhead (kernel start and stop); the ratio says how much a
week's notebook adds on top of that. Target: at most 3x.

Each other week's solution is also compared with week 5's (the same samples, no
extra runs): a week's notebook should run in at most twice week 5's time.

Notebooks are executed from a copy in a temporary directory (nothing is
written next to ``solutions/``, no output is saved). Solution notebooks that
do not exist yet are reported as such; a notebook that fails to execute is
reported with its error, without a ratio.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from datetime import datetime
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from bench.common import Comparison, timed

TITLE = "solution notebooks executed headless vs an empty notebook"

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT_S = 900


def solution_notebooks() -> list[Path]:
    return sorted(ROOT.glob("solutions/week*/*.ipynb"))


def run(quick: bool = False) -> list[Comparison]:
    notebooks = solution_notebooks()
    if not notebooks:
        print("  no solution notebooks yet (solutions/week*/*.ipynb): nothing to compare")
        return []
    repeats = 1 if quick else 3
    empty = timed(lambda: execute(nbformat.v4.new_notebook()), repeats)
    comparisons = []
    measured: dict[str, list[float]] = {}
    for path in notebooks:
        name = str(path.relative_to(ROOT))
        executed = nbformat.read(path, as_version=4)
        try:
            samples = timed(lambda nb=executed: execute(nb), repeats, warmup=0)
            slow = ", ".join(f"#{n} {s:.1f} s" for n, s in slowest_cells(executed))
            note = f"{len(executed.cells)} cells; slowest code cells: {slow}"
        except (CellExecutionError, RuntimeError, TimeoutError) as error:
            samples = []
            note = f"failed to execute: {str(error).strip().splitlines()[-1][:120]}"
        comparisons.append(Comparison("notebooks", name, "empty notebook", samples, empty,
                                      target=3.0, target_is_max=True, note=note))
        measured[path.parent.name] = samples
    comparisons += against_week5(measured)
    return comparisons


def against_week5(measured: dict[str, list[float]]) -> list[Comparison]:
    """Every other week's solution run time next to week 5's (target: at most 2x)."""
    week5 = measured.get("week5")
    if not week5:
        return []
    return [Comparison("notebooks", f"solutions/{week}", "solutions/week5", samples, week5,
                       target=2.0, target_is_max=True)
            for week, samples in sorted(measured.items()) if week != "week5" and samples]


def execute(notebook) -> None:
    """Run ``notebook`` in a fresh kernel, in a scratch directory (kernel chatter on stderr
    is dropped)."""
    scratch = Path(tempfile.mkdtemp(prefix="bench-nb-"))
    try:
        client = NotebookClient(notebook, timeout=TIMEOUT_S, kernel_name="python3",
                                resources={"metadata": {"path": str(scratch)}})
        client.execute(stderr=subprocess.DEVNULL)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def slowest_cells(notebook, top: int = 3) -> list[tuple[int, float]]:
    """``(cell number, seconds)`` of the slowest code cells of an executed notebook."""
    timings = []
    for number, cell in enumerate(notebook.cells, start=1):
        stamps = cell.get("metadata", {}).get("execution", {})
        began, ended = stamps.get("iopub.execute_input"), stamps.get("shell.execute_reply")
        if began and ended:
            seconds = (datetime.fromisoformat(ended.replace("Z", "+00:00"))
                       - datetime.fromisoformat(began.replace("Z", "+00:00"))).total_seconds()
            timings.append((number, seconds))
    return sorted(timings, key=lambda t: -t[1])[:top]
