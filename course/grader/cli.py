"""``python -m course.grader [--week 5 [--submission DIR]]``: grade like the instructor.

What ``make check [WEEK=N [SUBMISSION=DIR]]`` (and ``make release``) runs. It promises:

- one week: the report of :func:`course.grader.autograde.check_notebook`
  (:class:`course.grader.report.Report`), its last line ``weekN: <earned>/<total>``;
- without ``--week`` it grades every week the learner started, each from its ``weekN/``
  folder, and ends with a ``summary``: one ``weekN: x/y`` line per week and a last line
  ``total: x/y``;
- it announces no duration it cannot keep: it says what the time depends on and, at
  the end, how long grading took;
- bad input (no such week, a missing folder, a folder without the notebook, a notebook
  file that is not valid) gets a one-line explanation and exit status 2; nothing is
  graded.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from course.grader.autograde import (
    REPO,
    GradingError,
    check_notebook,
    check_request,
    release,
    weeks_with_notebooks,
)
from course.grader.report import Report, num, shown


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m course.grader",
        description="Grade a week's notebook with nbgrader, hidden tests included.")
    parser.add_argument("--week", type=int, help="the week number, e.g. 5")
    parser.add_argument("--release", action="store_true",
                        help="instead of grading: regenerate weekN/ from solutions/weekN/ "
                             "(every week without --week); overwrites weekN/")
    parser.add_argument("--submission", type=Path,
                        help="the folder holding the notebook (default: weekN/ of this repository)")
    parser.add_argument("--timeout", type=int, metavar="SECONDS",
                        help="stop a cell after this long (default: nbgrader_config.py)")
    parser.add_argument("--keep", type=Path, metavar="DIR",
                        help="build the throwaway course in DIR and keep it (to inspect)")
    args = parser.parse_args(argv)
    # Your own notebook, on your own machine: the test guard, not the sandbox's walls
    # (course/sandbox/jail.py); COURSE_GRADING_SANDBOX=on asks for them anyway.
    os.environ.setdefault("COURSE_GRADING_SANDBOX", "off")
    if args.release:
        try:
            for week in [args.week] if args.week else weeks_with_notebooks():
                print(f"released {shown(release(week))}", flush=True)
        except GradingError as error:
            print(f"make release: {error}", file=sys.stderr)
            return 2
        return 0
    if args.submission is None and (note := other_clone_note()):
        print(note, file=sys.stderr, flush=True)
    if args.week is None:
        if args.submission is not None:
            parser.error("--submission needs --week (make check WEEK=5 SUBMISSION=dir)")
        return _check_every_week(args)
    return _check_one_week(args.week, args.submission or REPO / f"week{args.week}", args)


def other_clone_note(here: Path | None = None, repo: Path = REPO) -> str | None:
    """One line when ``make check`` runs in a clone of the course whose Python imports the
    ``course`` package of another clone (a shared environment): the notebooks graded are then
    that other clone's. None when ``here`` (default: the working folder) is ``repo`` or is not
    a clone of the course."""
    here = (here or Path.cwd()).resolve()
    if here == repo.resolve() or not (here / "course" / "__init__.py").is_file() \
            or not (here / "Makefile").is_file():
        return None
    return (f"make check: note: this Python imports the course from {repo}/course, so it "
            f"grades the notebooks in {repo}/, not in {here}/; run `make setup` in {here} "
            "(or set PYTHONPATH=$PWD) to grade this folder's notebooks")


def _check_one_week(week: int, folder: Path, args: argparse.Namespace) -> int:
    reports = _graded(week, folder, args)
    if reports is None:
        return 2
    print("\n".join(reports["student"].lines()), flush=True)
    return 0


def _check_every_week(args: argparse.Namespace) -> int:
    """``make check`` with no WEEK: grade every week the learner started (one whose answer
    cells are all still the release's blank is skipped, as ``make test`` skips it), one
    block per week, then a summary and a total over the weeks graded."""
    from course.grader.selfcheck import started

    totals: list[tuple[int, Report | None]] = []
    skipped: list[int] = []
    for week in weeks_with_notebooks():
        folder = REPO / f"week{week}"
        notebook = folder / f"week{week}.ipynb"
        if notebook.is_file() and not started(notebook):
            skipped.append(week)
            continue
        reports = _graded(week, folder, args)
        if reports is not None:
            print("\n".join(reports["student"].lines()), flush=True)
        totals.append((week, reports["student"] if reports else None))
    print("\nsummary", flush=True)
    earned = total = 0.0
    for week, report in totals:
        if report is None:
            print(f"week{week}: not graded (see above)")
            continue
        earned += report.earned
        total += report.total
        print(f"week{week}: {num(report.earned)}/{num(report.total)}")
    if skipped:
        print(f"not started (skipped): {', '.join(f'week{w}' for w in skipped)}")
    print(f"total: {num(earned)}/{num(total)}" + (" (the weeks you started)" if skipped
                                                    else ""), flush=True)
    return 0 if all(report is not None for _, report in totals) else 2


def _graded(week: int, folder: Path, args: argparse.Namespace) -> dict[str, Report] | None:
    """Grade one folder for ``make check``; None (after saying why) when it cannot be graded."""
    try:
        check_request(week, [folder])
    except GradingError as error:
        print(f"make check: {error}", file=sys.stderr)
        return None
    print(f"nbgrader is running {shown(folder)} (as saved on disk) in a fresh kernel with "
          "every test, hidden ones included; that takes as long as running the notebook top "
          "to bottom, plus a few seconds...", flush=True)
    started = time.monotonic()
    try:
        report, noticed = check_notebook(week, folder, timeout_s=args.timeout, keep=args.keep)
    except GradingError as error:
        print(f"make check: {error}", file=sys.stderr)
        return None
    for line in noticed:  # "rewired the kernel's ...", "exercise 5 calls the course's ..."
        print(f"note: {line}", flush=True)
    print(f"graded in {time.monotonic() - started:.0f} s", flush=True)
    return {"student": report}


if __name__ == "__main__":
    raise SystemExit(main())
