"""``make site``: what a rebuild with nothing changed costs, and what the first build costs.

1. A second ``make site`` with nothing changed against Sphinx's own no-op build of the same
   sources (``sphinx-build -b html`` with the same environment folder and output, which
   finds nothing out of date): both start a Python, read Sphinx's environment and check
   every page; ``make site`` also checks its stamps, hashes its inputs (every notebook and
   the ``course`` package, the runs' cache key) and finds the leak search's stamp still
   valid. Measured alternately. Target: at most 1.2x.
2. The first build (an empty work folder and run cache: every notebook run, every page
   written, Sphinx from scratch, the leak search) against the bare runs of the same
   solution notebooks, summed (``bench.notebooks.execute``: nbclient, a fresh kernel,
   nothing kept). No target: it says what the site adds to running the notebooks.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.common import Comparison, interleaved

TITLE = "make site: a no-change rebuild vs Sphinx's no-op, the first build vs bare runs"
ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "website" / "_build"


def _make_site() -> None:
    subprocess.run(["make", "--no-print-directory", "site"], cwd=ROOT, check=True,
                   stdout=subprocess.DEVNULL)


def _sphinx_noop() -> None:
    subprocess.run([str(Path(sys.executable).with_name("sphinx-build")), "-b", "html", "-q",
                    "-d", str(WORK / "doctrees"), str(WORK / "src"), str(WORK / "html")],
                   cwd=ROOT, check=True, stdout=subprocess.DEVNULL)


def run(quick: bool = False) -> list[Comparison]:
    _make_site()  # the site as it is now: the runs cached, the pages written
    again, noop = interleaved(_make_site, _sphinx_noop, 3 if quick else 7)
    comparisons = [Comparison(
        "site", "make site, nothing changed", "sphinx-build no-op, same sources", again, noop,
        target=1.2, target_is_max=True,
        note="both processes start from the shell; make site also checks its stamps and "
             "hashes its inputs")]

    import nbformat

    from bench.notebooks import execute, solution_notebooks

    notebooks = [nbformat.read(p, as_version=4) for p in solution_notebooks()]
    scratch = Path(tempfile.mkdtemp(prefix="bench-site-"))
    try:
        def first_build() -> None:
            shutil.rmtree(scratch / "work", ignore_errors=True)
            subprocess.run([sys.executable, "-m", "website.build", "--quiet",
                            "--out", str(scratch / "work" / "html"),
                            "--work", str(scratch / "work"),
                            "--runs", str(scratch / "work" / "runs")],
                           cwd=ROOT, check=True)

        def bare_runs() -> None:
            for notebook in notebooks:
                execute(nbformat.from_dict(notebook))

        first, bare = interleaved(first_build, bare_runs, 1 if quick else 2, warmup=0)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    comparisons.append(Comparison(
        "site", "make site, first build (nothing cached)",
        f"bare runs of the {len(notebooks)} solution notebooks, summed", first, bare,
        note="the first build runs each notebook once, then Sphinx and the leak search"))
    return comparisons


if __name__ == "__main__":
    for comparison in run(quick="--quick" in sys.argv):
        print("\n".join(comparison.lines()))
