"""The instructor's nbgrader course: nbgrader run for this repository, a week released
and registered in its gradebook, and the exchange folder.

It promises:

- :func:`course_config`: the repository's ``nbgrader_config.py`` with the course root
  and the gradebook (:func:`db_url_of`: ``--db-url``, ``COURSE_DB_URL`` or
  ``gradebook.db``; a ``postgresql://`` URL driven by psycopg 3) set;
- nbgrader run in this process (:func:`run_converter`) or as a program
  (:func:`nbgrader`), either with this virtualenv's ``bin/`` on PATH
  (:func:`tools_on_path`: nbgrader starts ``alembic`` as a program), a failure raised as
  :class:`~course.grader.autograde.GradingError` in one line;
- :func:`release` regenerates ``weekN/`` and registers the week in the gradebook;
  :func:`ensure_registered` does so only when the gradebook's grade cells differ from
  ``solutions/weekN`` (:func:`in_sync`), which every instructor step calls first;
- :func:`open_exchange`: the exchange folder, writable by every account.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import nbformat

from course.grader import speedups
from course.grader.autograde import REPO, GradingError
from course.grader.declaration import DeclarationError, load


# --------------------------------------------------------------------- nbgrader
def tools_on_path(env: dict[str, str] | None = None) -> dict[str, str]:
    """``env`` (default: this process's) with this interpreter's ``bin/`` first on PATH."""
    env = os.environ if env is None else env
    bin_dir = str(Path(sys.executable).parent)
    if bin_dir not in env.get("PATH", "").split(os.pathsep):
        env["PATH"] = bin_dir + os.pathsep + env.get("PATH", "")
    return env


def db_url_of(repo: Path, db_url: str | None = None) -> str:
    """The gradebook's SQLAlchemy URL: ``db_url``, ``COURSE_DB_URL`` or ``gradebook.db``;
    a ``postgresql://`` URL is driven by psycopg 3 (the driver the course installs)."""
    url = db_url or os.environ.get("COURSE_DB_URL") or f"sqlite:///{Path(repo) / 'gradebook.db'}"
    for scheme in ("postgresql://", "postgres://"):
        if url.startswith(scheme):
            return "postgresql+psycopg://" + url.removeprefix(scheme)
    return url


def course_config(repo: Path = REPO, db_url: str | None = None):
    """The repository's ``nbgrader_config.py`` with the course root and gradebook set."""
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(repo)).load_config()
    config.CourseDirectory.root = str(repo)
    config.CourseDirectory.db_url = db_url_of(repo, db_url)
    return config


def run_converter(name: str, config, assignment: str, student: str | None = None) -> None:
    """Run nbgrader's ``generate_assignment`` / ``autograde`` / ``generate_feedback`` in this
    process; :class:`GradingError` with nbgrader's log when it fails."""
    from nbgrader import converters
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.utils import capture_log

    tools_on_path()
    speedups.install()
    classes = {"generate_assignment": converters.GenerateAssignment,
               "autograde": converters.Autograde,
               "generate_feedback": converters.GenerateFeedback}
    coursedir = CourseDirectory(config=config)
    coursedir.assignment_id = assignment
    if student:
        coursedir.student_id = student
    app = classes[name](coursedir=coursedir, config=config)
    speedups.lighten(app)
    app.force = True
    result = capture_log(app)
    if not result["success"]:
        raise GradingError(f"nbgrader {name} {assignment} failed: "
                           f"{result.get('error', '') or result.get('log', '')}".strip())


def nbgrader(args: list[str], repo: Path = REPO, db_url: str | None = None,
             ) -> subprocess.CompletedProcess:
    """``nbgrader <args>`` as a program, from the course root, with the tools on PATH."""
    env = tools_on_path(dict(os.environ))
    command = [sys.executable, "-m", "nbgrader", *args,
               f"--CourseDirectory.db_url={db_url_of(repo, db_url)}"]
    done = subprocess.run(command, cwd=repo, env=env, capture_output=True, text=True)
    if done.returncode:
        last = [line for line in (done.stderr + done.stdout).splitlines() if line.strip()]
        raise GradingError(f"nbgrader {args[0]} failed: {last[-1] if last else done.returncode}")
    return done


# ------------------------------------------------------------ the gradebook
def source_cells(repo: Path, week: int) -> set[tuple[str, str, float]]:
    """(notebook, grade id, points) of every graded cell in ``solutions/weekN``."""
    found = set()
    for path in sorted((Path(repo) / "solutions" / f"week{week}").glob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            meta = cell.metadata.get("nbgrader", {})
            if meta.get("grade"):
                found.add((path.stem, meta["grade_id"], float(meta.get("points", 0))))
    return found


def in_sync(repo: Path, week: int, db_url: str | None = None) -> bool:
    """The gradebook holds ``weekN`` with exactly the graded cells of its source."""
    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(db_url_of(repo, db_url)) as gb:
        try:
            assignment = gb.find_assignment(f"week{week}")
        except MissingEntry:
            return False
        held = {(nb.name, cell.name, float(cell.max_score))
                for nb in assignment.notebooks for cell in nb.grade_cells}
    return held == source_cells(repo, week)


def release(week: int, repo: Path = REPO, db_url: str | None = None) -> Path:
    """Regenerate ``weekN/`` from ``solutions/weekN/`` and register it in the gradebook.

    Raises:
        GradingError: no source notebook, or its declaration (``week.toml``) is missing or
            disagrees with it (:func:`course.grader.declaration.load`): nothing is released.
    """
    if not any((Path(repo) / "solutions" / f"week{week}").glob("*.ipynb")):
        raise GradingError(f"solutions/week{week} has no notebook to release")
    try:
        load(week, Path(repo))
    except DeclarationError as error:
        raise GradingError(str(error)) from None
    run_converter("generate_assignment", course_config(repo, db_url), f"week{week}")
    return Path(repo) / f"week{week}"


def ensure_registered(week: int, repo: Path = REPO, db_url: str | None = None) -> bool:
    """Register ``weekN`` (regenerating its release) when the gradebook is out of date;
    True if it had to."""
    if in_sync(repo, week, db_url):
        return False
    release(week, repo, db_url)
    return True


# ------------------------------------------------------------- the exchange
def exchange_root(repo: Path = REPO) -> Path:
    return Path(course_config(repo).Exchange.root)


def open_exchange(repo: Path = REPO) -> Path:
    """Create the exchange folder, writable by every account (sticky, like /tmp)."""
    root = exchange_root(repo)
    root.mkdir(parents=True, exist_ok=True)
    if stat.S_IMODE(root.stat().st_mode) != 0o1777:
        root.chmod(0o1777)
    return root
