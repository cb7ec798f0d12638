"""``make site`` (``python -m website.build``): the course as a static website, from its
notebooks, with the outputs of a real run and without a single answer.

Steps, each skipped when its inputs did not change:

1. **Run** each week's SOLUTION notebook headless (:mod:`website.execute`: nbclient and
   the course's kernel, widgets pictured). The run is cached in
   ``website/_build/executed/weekN.ipynb`` under a key made of the solution notebook, the
   release notebook, every file of the ``course/`` package (what the notebook imports)
   and the runner's own two files: a week whose key did not change is not run again.
2. **Write the pages** Sphinx reads into ``website/_build/src/`` (:mod:`website.pages`): each
   week's RELEASE with the run's outputs on its lesson cells, the home page (the README's
   "who it is for", the weeks table from ``course.grader.declaration``, how to start) and
   ``docs/instructors.md``. A file is rewritten only when its text changed, so Sphinx
   (which compares modification times) reads only what changed.
3. **Build** with Sphinx and MyST-NB (``website/conf.py`` says why this tool) into
   ``website/_build/html/`` (MyST-NB puts the outputs' images beside it, in
   ``jupyter_execute/``); Sphinx's own environment in ``website/_build/doctrees/`` makes
   it incremental.
4. **Search** every file of the built site for leaks (:mod:`website.leaks`): a solution,
   a hidden test, a rubric line, a declared secret. Any found: the site is deleted and the
   command fails, naming each. The search is skipped when neither the site nor what it
   searches for changed since a clean search.

``--out`` and ``--work`` move the site and the work folder (the runs stay cached in
``--runs``, by default ``website/_build/executed``); ``--committed`` builds from the
notebooks as committed (``git show HEAD:...``), not as they are in the work tree.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
HERE = Path(__file__).resolve().parent
WORK = HERE / "_build"  # gitignored: the runs, the pages, Sphinx's environment, the site
OUT = WORK / "html"


def digest(*parts: bytes) -> str:
    hasher = hashlib.sha256()
    for part in parts:
        hasher.update(hashlib.sha256(part).digest())
    return hasher.hexdigest()


def tree_digest(root: Path, patterns: tuple[str, ...] = ("*",)) -> str:
    """One hash of every file under ``root`` matching ``patterns`` (names and contents;
    bytecode caches left out)."""
    files = sorted({p for pattern in patterns for p in root.rglob(pattern) if p.is_file()
                    and "__pycache__" not in p.parts and p.suffix != ".pyc"})
    return digest(*(part for p in files for part in (str(p.relative_to(root)).encode(),
                                                     p.read_bytes())))


def write_if_changed(path: Path, text: str) -> bool:
    """Write ``text`` to ``path`` unless it holds it already (its time then stays)."""
    if path.is_file() and path.read_text() == text:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_text(text)
    temporary.replace(path)
    return True


class Sources:
    """The notebooks the site is built from: the work tree's, or HEAD's (``--committed``)."""

    def __init__(self, repo: Path, committed: bool) -> None:
        self.repo, self.committed = repo, committed
        self._folder = Path(tempfile.mkdtemp(prefix="course-site-head-")) if committed else None

    def path(self, relative: str) -> Path:
        if self._folder is None:
            return self.repo / relative
        copy = self._folder / relative
        if not copy.is_file():
            shown = subprocess.run(["git", "show", f"HEAD:{relative}"], cwd=self.repo,
                                   capture_output=True, check=True)
            copy.parent.mkdir(parents=True, exist_ok=True)
            copy.write_bytes(shown.stdout)
        return copy

    def close(self) -> None:
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)


def weeks(repo: Path) -> list[int]:
    return sorted(int(p.parent.name[4:]) for p in (repo / "solutions").glob("week*/week*.ipynb")
                  if p.parent.name[4:].isdigit() and p.name == f"{p.parent.name}.ipynb"
                  and (repo / p.parent.name / p.name).is_file())


def run_week(number: int, sources: Sources, runs: Path, course_key: str,
             say) -> tuple[Path, str]:
    """The executed solution notebook of week ``number`` (run now, or the cached run when
    its key matches) and its key."""
    from website import execute

    solution = sources.path(f"solutions/week{number}/week{number}.ipynb")
    release = sources.path(f"week{number}/week{number}.ipynb")
    key = digest(solution.read_bytes(), release.read_bytes(), course_key.encode(),
                 Path(execute.__file__).read_bytes(), execute.PICTURES.read_bytes())
    cached, stamp = runs / f"week{number}.ipynb", runs / f"week{number}.key"
    if cached.is_file() and stamp.is_file() and stamp.read_text() == key:
        say(f"week {number}: inputs unchanged, not run again")
        return cached, key
    import nbformat

    say(f"week {number}: running solutions/week{number}/week{number}.ipynb ...")
    executed, seconds = execute.execute(solution, f"week {number}")
    runs.mkdir(parents=True, exist_ok=True)
    write_if_changed(cached, nbformat.writes(executed))
    write_if_changed(stamp, key)
    say(f"week {number}: ran in {seconds:.1f} s")
    return cached, key


def build(out: Path = OUT, work: Path = WORK, runs: Path | None = None, repo: Path = REPO,
          committed: bool = False, quiet: bool = False) -> dict:
    """Build the site; returns a summary (pages, bytes, seconds, weeks run). Raises
    :class:`SiteError` on a failed run, a failed Sphinx build or a leak."""
    started = time.monotonic()
    say = (lambda _line: None) if quiet else (lambda line: print(line, flush=True))
    runs = runs or WORK / "executed"
    src, doctrees = work / "src", work / "doctrees"
    state_path = work / "state.json"
    state = json.loads(state_path.read_text()) if state_path.is_file() else {}
    course_key = tree_digest(repo / "course")
    builder_key = digest(*(p.read_bytes() for p in [*sorted(HERE.glob("*.py")),
                                                    *sorted((HERE / "static").glob("*"))]))
    sources = Sources(repo, committed)
    try:
        numbers = weeks(repo)
        # what a page's text depends on beside its run: the secrets searched for (all
        # solutions, rubrics, public texts), the README and declarations (home page)
        shared_key = digest(builder_key.encode(), *(
            p.read_bytes() for pattern in ("solutions/week*/week*.ipynb",
                                           "solutions/week*/week.toml", "rubrics/*.md",
                                           "week*/week*.ipynb", "docs/*.md", "README.md")
            for p in sorted(repo.glob(pattern))), str(committed).encode())
        secrets = None
        changed = False  # any page rewritten: every page's sidebar may have changed
        ran = []
        new_state = {}
        for number in numbers:
            executed_path, run_key = run_week(number, sources, runs, course_key, say)
            page_key = digest(run_key.encode(), shared_key.encode())
            page_path = src / f"week{number}.ipynb"
            new_state[f"week{number}"] = page_key
            if state.get(f"week{number}") == page_key and page_path.is_file():
                continue
            ran.append(number)
            if secrets is None:
                from website.leaks import secrets as read_secrets
                secrets = read_secrets(repo)
            text, notes = _week_page_text(number, sources, executed_path, secrets)
            for note in notes:
                say(note)
            changed |= write_if_changed(page_path, text)
        home_key = digest(shared_key.encode(), str(numbers).encode())
        new_state["home"] = home_key
        if state.get("home") != home_key or not (src / "index.md").is_file():
            changed |= _write_fixed_pages(src, repo, numbers)
        for stale in set(p.stem for p in src.glob("week*.ipynb")) - {f"week{n}" for n in numbers}:
            (src / f"{stale}.ipynb").unlink()
            changed = True
        write_if_changed(state_path, json.dumps(new_state, indent=1))
    finally:
        sources.close()

    from sphinx.cmd.build import build_main

    say(f"sphinx: {src} -> {out}")
    # Sphinx reads only the changed pages, but would rewrite only those too: the others'
    # sidebars (Furo's: every page's title) would be stale. -a writes every page then.
    status = build_main(["-b", "html", "-q", *(["-a"] if changed else []), "-d", str(doctrees),
                         str(src), str(out)])
    if status != 0:
        raise SiteError(f"Sphinx failed (exit {status}); its messages are above")

    check_key = digest(tree_digest(out).encode(), shared_key.encode())
    check_stamp = work / "leak-search.key"
    if not (check_stamp.is_file() and check_stamp.read_text() == check_key):
        from website.leaks import site_leaks

        found = site_leaks(out, repo)
        if found:
            shutil.rmtree(out, ignore_errors=True)
            check_stamp.unlink(missing_ok=True)
            raise SiteError("the leak search found what the site must not show (the site "
                            "was deleted):\n  " + "\n  ".join(found[:40]))
        write_if_changed(check_stamp, check_key)
        say("leak search: no solution, hidden test, rubric line or secret in the site")
    else:
        say("leak search: the site and what it searches for are unchanged since a clean search")
    files = [p for p in out.rglob("*") if p.is_file()]
    summary = {"pages": len(list(out.glob("*.html"))), "bytes": sum(p.stat().st_size
                                                                   for p in files),
               "files": len(files), "seconds": time.monotonic() - started, "ran": ran}
    say(f"site: {out / 'index.html'}: {summary['pages']} pages, {summary['files']} files, "
        f"{summary['bytes'] / 1e6:.1f} MB, in {summary['seconds']:.1f} s")
    return summary


class SiteError(RuntimeError):
    """The site could not be built, or would leak."""


def _week_page_text(number: int, sources: Sources, executed_path: Path, secrets) -> tuple[
        str, list[str]]:
    import nbformat

    from course.grader.declaration import load
    from website.pages import week_page

    release = nbformat.read(sources.path(f"week{number}/week{number}.ipynb"), as_version=4)
    executed = nbformat.read(executed_path, as_version=4)
    declared = load(number, REPO, check=False)
    answer_ids = {grade_id for exercise in declared.exercises for grade_id in exercise.answers}
    answer_ids |= {written.id for written in declared.written}
    page, notes = week_page(number, release, executed, answer_ids,
                            lambda text: secrets.found_in(text, f"week{number}"))
    return nbformat.writes(page), notes


def _write_fixed_pages(src: Path, repo: Path, numbers: list[int]) -> bool:
    from course.grader.declaration import weeks_table
    from website.pages import home_page, instructors_page

    readme = (repo / "README.md").read_text()
    changed = write_if_changed(src / "index.md", home_page(readme, weeks_table(repo), numbers))
    changed |= write_if_changed(src / "instructors.md", instructors_page(
        (repo / "docs" / "instructors.md").read_text()))
    changed |= write_if_changed(src / "conf.py", (HERE / "conf.py").read_text())
    for static in sorted((HERE / "static").glob("*")):
        changed |= write_if_changed(src / "_static" / static.name, static.read_text())
    return changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="make site", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT,
                        help="where the site goes (website/_build/html/)")
    parser.add_argument("--work", type=Path, default=WORK,
                        help="Sphinx's sources and environment (website/_build/)")
    parser.add_argument("--runs", type=Path, default=None,
                        help="where the notebook runs are cached (website/_build/executed/)")
    parser.add_argument("--committed", action="store_true",
                        help="build from the notebooks as committed (HEAD), not the work tree")
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    try:
        build(args.out.resolve(), args.work.resolve(), args.runs and args.runs.resolve(),
              committed=args.committed, quiet=args.quiet)
    except SiteError as error:
        print(f"make site: {error}", file=sys.stderr)
        return 1
    except Exception as error:
        from website.execute import ExecutionFailed

        if isinstance(error, ExecutionFailed):
            print(f"make site: a notebook failed to run: {error}", file=sys.stderr)
            return 1
        raise
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
