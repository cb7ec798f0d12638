"""``make student-edition DEST=dir``: the repository a graded class hands to students.

The full repository is the self-learner's edition: it holds the solutions and the
hidden tests, because ``make check`` needs them. A class that grades cannot give
students that. :func:`write_edition` writes, into a new folder:

- the ``course`` package, the released ``weekN/`` notebooks (nbgrader's student
  version: no solutions, no hidden tests), ``pyproject.toml``, ``constraints.txt``,
  ``environment.yml``, ``nbgrader_config.py`` (for Validate in JupyterLab);
- a student ``README.md`` and a ``Makefile`` whose ``make test`` (every started week)
  and ``make check WEEK=N`` run the visible tests only (:mod:`course.grader.selfcheck`)
  and say so;
- and nothing else: no ``solutions/``, ``rubrics/``, ``tests/`` (they hold wrong
  answers and read the solutions), ``bench/``, ``docs/instructors.md`` or git history.

It refuses (one line) a destination that exists and is not empty, or one inside this
repository. :func:`leaks` lists any hidden-test marker or solution block found in a
folder, and any of a week's declared secrets found in that week's folder; the edition is
checked with it before :func:`write_edition` returns.
"""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import nbformat

from course.grader.autograde import REPO, GradingError, weeks_with_notebooks
from course.grader.cells import HIDDEN, HIDDEN_END
from course.grader.declaration import declared_weeks, load
from course.grader.week import DeclarationError

TOP_FILES = ("pyproject.toml", "constraints.txt", "environment.yml", "nbgrader_config.py",
             ".gitignore")
SOLUTION = ("### BEGIN " + "SOLUTION", "### END " + "SOLUTION")  # in two parts: this file
MARKERS = (HIDDEN, HIDDEN_END, *SOLUTION)  # ships in the edition and must not hold a marker

README = """# Crash, Resume, Don't Charge Twice (student edition)

Your class's copy of the course: the `course` package and this term's notebooks.
Your instructor grades your work with nbgrader, including hidden tests that are not
in this repository.

    make lab [WEEK=5]   # opens JupyterLab on the first week, or on week 5 (sets everything up)
    make test           # every week you started: its *visible* tests, as saved
    make check WEEK=5   # runs week 5's *visible* tests on weekN/weekN.ipynb as saved

`make check` ends with `week5: visible tests passed a/b`. Passing every visible test
does not guarantee full marks: the hidden tests and the written answers decide the
points, and your instructor runs them. In JupyterLab, the Validate button does the
same visible-only check.

The `course` package holds the reference implementations that later weeks build on
(week 1's `parse`, week 5's `guarded`, week 6's `select_recovery`, ...): read them, use
them where a notebook imports them, but an exercise asks for your own code. An answer
that calls the package's implementation of that same exercise, under any name, scores
nothing for it, and the grader says so.

Hand your work in the way your instructor says (in JupyterHub: the Assignments tab,
or `nbgrader submit weekN`); fetch feedback with `nbgrader fetch_feedback weekN`.
"""

MAKEFILE = """# Student edition: make lab, make check WEEK=N (visible tests only).
PYTHON ?= python3
BIN    := .venv/bin
export PATH := $(CURDIR)/$(BIN):$(PATH)
.PHONY: setup lab test check
setup: .venv/.installed
.venv/.installed: pyproject.toml constraints.txt
\t@test -x $(BIN)/python || $(PYTHON) -m venv .venv
\t$(BIN)/python -m pip install --quiet -c constraints.txt pip
\tPYTHONWARNINGS='ignore:Editable installation' $(BIN)/python -m pip install --quiet \\
\t\t-c constraints.txt -e .
\t$(BIN)/python -W ignore::RuntimeWarning -m course.base.lazy_rfc3987 install-pth
\t@touch $@
lab: setup
\t$(BIN)/python -m course.classroom.lab
test: setup
\t@$(BIN)/python -m course.grader.selfcheck --started
check: setup
\t@test -n "$(WEEK)" || { echo "make check: give the week, e.g. make check WEEK=5" >&2; exit 2; }
\t$(BIN)/python -m course.grader.selfcheck --week $(WEEK)
"""


def _squash(text: str) -> str:
    return "\n".join(line.strip() for line in text.splitlines() if line.strip())


def solution_blocks(repo: Path = REPO) -> list[str]:
    """Every solution (code between solution markers, and model written answers) in
    ``solutions/``, whitespace-squashed."""
    blocks = []
    for path in sorted((Path(repo) / "solutions").glob("week*/*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            meta = cell.metadata.get("nbgrader", {})
            found = re.findall(f"{SOLUTION[0]}\n(.*?){SOLUTION[1]}", cell.source, re.S)
            if meta.get("solution") and not found:
                found = [cell.source]
            blocks += [_squash(b) for b in found if len(_squash(b).splitlines()) >= 2]
    return blocks


def week_secrets(repo: Path = REPO) -> dict[str, tuple[str, ...]]:
    """``{"weekN": its declared secrets}`` (:mod:`course.grader.declaration`): text that
    gives a solution away and must not be in that week's release."""
    found = {}
    for week in declared_weeks(repo):
        try:
            found[f"week{week}"] = load(week, repo, check=False).secrets
        except DeclarationError:
            found[f"week{week}"] = ()  # release() refuses such a week; nothing to search for
    return found


def leaks(folder: Path, repo: Path = REPO) -> list[str]:
    """``path: what`` for every marker, whole solution block, or (in a week's folder) that
    week's declared secret found under ``folder``."""
    blocks, secrets, found = solution_blocks(repo), week_secrets(repo), []
    for path in sorted(Path(folder).rglob("*")):
        if not path.is_file():
            continue
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue
        if path.suffix == ".ipynb":
            text += "\n" + "\n".join(c.source for c in nbformat.reads(text, 4).cells)
        found += [f"{path.relative_to(folder)}: {m}" for m in MARKERS if m in text]
        week = path.relative_to(folder).parts[0]
        found += [f"{path.relative_to(folder)}: the secret {s!r}" for s in secrets.get(week, ())
                  if s in text]
        squashed = _squash(text)
        found += [f"{path.relative_to(folder)}: solution starting {b.splitlines()[0][:50]!r}"
                  for b in blocks if b in squashed]
    return found


def write_edition(dest: Path, repo: Path = REPO) -> Path:
    dest = Path(dest).resolve()
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise GradingError(f"{dest} exists and is not empty; give a new folder")
    if dest == Path(repo).resolve() or Path(repo).resolve() in dest.parents:
        raise GradingError(f"{dest} is inside the repository; give a folder outside it")
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copytree(Path(repo) / "course", dest / "course", ignore=shutil.ignore_patterns(
        "__pycache__", "*.pyc"))
    for name in TOP_FILES:
        if (Path(repo) / name).is_file():
            shutil.copy2(Path(repo) / name, dest / name)
    for week in weeks_with_notebooks(repo):
        release = Path(repo) / f"week{week}"
        if release.is_dir():
            shutil.copytree(release, dest / f"week{week}", ignore=shutil.ignore_patterns(
                ".ipynb_checkpoints"))
    (dest / "README.md").write_text(README)
    (dest / "Makefile").write_text(MAKEFILE)
    problems = leaks(dest, repo)
    if problems:
        shutil.rmtree(dest)
        raise GradingError(f"the edition would leak {problems[0]} (and {len(problems) - 1} "
                           "more); nothing written")
    return dest


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m course.term.edition DEST (make student-edition DEST=dir)",
              file=sys.stderr)
        return 2
    try:
        dest = write_edition(Path(args[0]))
    except GradingError as error:
        print(f"make student-edition: {error}", file=sys.stderr)
        return 2
    print(f"wrote the student edition to {dest} (no solutions, no hidden tests); "
          "`make check WEEK=N` there runs the visible tests", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
