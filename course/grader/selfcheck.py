"""``python -m course.grader.selfcheck --week N``: run a notebook's visible tests only.

What the student edition's ``make check`` runs (that edition has no ``solutions/``, so
nbgrader's hidden tests cannot run there). It promises:

- the notebook (``weekN/weekN.ipynb``, or ``--notebook PATH``) runs top to bottom in a
  fresh kernel, as saved on disk; the file is only read;
- every test cell is listed: ``ok`` or ``FAIL`` with the test's last error line, or
  ``hidden`` for a cell whose tests are all hidden (run by the instructor); when one
  fails, a first line says what to do next, in ``make check``'s words
  (:mod:`course.grader.verdict`: a syntax error names its line in the cell);
- written answers are counted (cells, points) and said to be graded by the instructor
  (this edition holds no rubrics or model answers);
- the last line is ``weekN: visible tests passed a/b``; it never claims a score, because
  hidden tests decide the points; exit status 0 when it ran, 2 on bad input.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import nbformat

from course.grader.verdict import NOT_DONE, failure, in_cell, next_step

REPO = Path(__file__).resolve().parents[2]


def is_hidden_only(source: str) -> bool:
    """A released test cell whose code was all hidden tests (only comments remain)."""
    return not [line for line in source.splitlines()
                if line.strip() and not line.strip().startswith("#")]


def written_answers(notebook: Path) -> str:
    """The line about the notebook's written answers ("" if it has none)."""
    points = [cell.metadata["nbgrader"].get("points", 0)
              for cell in nbformat.read(notebook, as_version=4).cells
              if cell.metadata.get("nbgrader", {}).get("grade")
              and cell.metadata["nbgrader"].get("solution")]
    if not points:
        return ""
    cells = f"{len(points)} cell{'s' if len(points) != 1 else ''}"
    return f"Written answers ({cells}, {sum(points):g} points) are graded by your instructor."


def check(notebook: Path, timeout_s: int = 120) -> tuple[list[str], int, int]:
    """(report lines, visible tests passed, visible tests) for one notebook."""
    from nbclient import NotebookClient

    nb = nbformat.read(notebook, as_version=4)
    NotebookClient(nb, timeout=timeout_s, allow_errors=True, kernel_name="python3",
                   resources={"metadata": {"path": str(notebook.parent)}}).execute()
    lines, passed, visible, first = [], 0, 0, ""
    heading, raised = "(before the first heading)", {}  # heading -> its answer cell's error
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type == "markdown" and not meta.get("solution"):
            titles = re.findall(r"^#{1,3} +(.+)$", cell.source, re.M)
            heading = re.sub(r"\s*\(\d+ points?[^)]*\)\s*$", "", titles[0]) if titles else heading
        errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
        if meta.get("solution") and cell.cell_type == "code" and errors:
            raised.setdefault(heading, failure(errors[-1].get("ename"), in_cell(
                str(errors[-1].get("evalue", "")), "the answer cell")))
        if not meta.get("grade") or meta.get("solution"):
            continue
        name = meta.get("grade_id", "?")
        if is_hidden_only(cell.source):
            lines.append(f"  hidden  {name} (run by your instructor)")
            continue
        visible += 1
        if errors:
            said = failure(errors[-1].get("ename"), in_cell(
                str(errors[-1].get("evalue", "")), "the test cell"))
            lines.append(f"  FAIL    {name}: {said[:200]}")
            if not first:  # what to do next: the first failing exercise, in make check's words
                cause = raised.get(heading)
                first = next_step(heading, cause or said, answer=bool(cause)
                                  and cause != NOT_DONE)
        else:
            passed += 1
            lines.append(f"  ok      {name}")
    if first:
        lines.insert(0, f"What to do next: {first}")
    return lines, passed, visible


def started(notebook: Path) -> bool:
    """Has any answer cell left the release's blank (``# YOUR CODE HERE`` and ``raise
    NotImplementedError()``)?"""
    from course.grader.cells import BLANK

    return any(not BLANK.search(c.source) for c in nbformat.read(notebook, as_version=4).cells
               if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("solution"))


def check_started(repo: Path = REPO) -> int:
    """The student edition's ``make test``: every started week's visible tests, in order;
    a week not started is said so and costs no kernel. Exit status 1 when a visible test
    failed."""
    failed = 0
    folders = sorted((p for p in repo.glob("week*") if p.name[4:].isdigit()),
                     key=lambda p: int(p.name[4:]))
    for folder in folders:
        notebook = folder / f"{folder.name}.ipynb"
        if not notebook.is_file():
            continue
        if not started(notebook):
            print(f"{folder.name}: not started", flush=True)
            continue
        lines, passed, visible = check(notebook)
        print("\n".join(lines))
        print(f"{folder.name}: visible tests passed {passed}/{visible}", flush=True)
        failed += passed < visible
    print("Hidden tests, which decide your points, are your instructor's: passing every "
          "visible test does not promise full marks.")
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m course.grader.selfcheck",
                                     description="Run a week's visible tests.")
    parser.add_argument("--week", type=int)
    parser.add_argument("--started", action="store_true",
                        help="every started week's visible tests (the edition's make test)")
    parser.add_argument("--notebook", type=Path, help="default: weekN/weekN.ipynb")
    args = parser.parse_args(argv)
    if args.started:
        return check_started()
    if args.week is None:
        parser.error("give --week N, or --started")
    notebook = args.notebook or REPO / f"week{args.week}" / f"week{args.week}.ipynb"
    if not notebook.is_file():
        print(f"make check: {notebook} does not exist", file=sys.stderr)
        return 2
    try:
        nbformat.read(notebook, as_version=4)
    except Exception as error:  # JSON or schema: one line, nothing run
        print(f"make check: {notebook} is not a readable notebook ({type(error).__name__}); "
              "restore it from a checkpoint (File > Revert Notebook to Checkpoint)",
              file=sys.stderr)
        return 2
    print(f"running {notebook} (as saved) in a fresh kernel: visible tests only; "
          "hidden tests, which decide your points, are run by your instructor", flush=True)
    lines, passed, visible = check(notebook)
    print("\n".join(lines))
    written = written_answers(notebook)
    if written:
        print(written)
    print(f"week{args.week}: visible tests passed {passed}/{visible}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
