"""``python -m course.classroom.lab``: open JupyterLab on the course (what ``make lab`` runs).

Promises:
- Serves the repository root and opens one week's notebook: ``--week 5`` (``make lab
  WEEK=5``) opens ``week5/``'s, and without it the first week folder that has one
  (``week1/`` … ``week7/``). A week without a notebook is an error that names the weeks
  there are, before anything starts.
- Two roles, chosen with ``--role`` (``make lab ROLE=instructor``), each a Jupyter
  configuration folder shipped in ``course/classroom/jupyter/<role>/`` and put first on
  ``JUPYTER_CONFIG_PATH`` for this server only (nothing in your own Jupyter
  configuration is changed):

  - ``learner`` (the default): nbgrader's instructor tools are off (the Formgrader and
    the course list, their server extensions and their JupyterLab plugins, and the
    Create Assignment toolbar); Validate and the Assignments list stay. JupyterLab's
    news question and update check are off by default.
  - ``instructor``: everything nbgrader installs (Formgrader, Create Assignment, ...),
    with the news question off as well.

  Each folder holds ``jupyter_server_config.json`` (server extensions) and
  ``labconfig/page_config.json`` (``disabledExtensions``) and
  ``labconfig/default_setting_overrides.json`` (settings defaults; your own settings in
  JupyterLab still win).
- The address the server prints (with ``--no-browser``: the one to open by hand) opens
  the week's notebook, not the Launcher: JupyterLab's default URL is set to
  ``/lab/tree/weekN/weekN.ipynb`` (unless ``LAB_ARGS`` sets one).
- A notebook just opened is not marked modified when its kernel starts: the server hands
  it over with the ``language_info`` the kernel will write (``course/classroom/contents.py``).
- Adds ``--allow-root`` when run as root (JupyterLab refuses root otherwise). Other
  arguments go straight to ``jupyter lab`` (``make lab LAB_ARGS="--port=9999
  --no-browser"``).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from urllib.parse import quote

REPO = Path(__file__).resolve().parents[2]
SETTINGS = Path(__file__).resolve().parent / "jupyter"  # one Jupyter config folder per role
ROLES = ("learner", "instructor")


def week_folders(repo: Path = REPO) -> list[Path]:
    """``week1``, ``week2``, ... ``week10`` under ``repo``, in number order."""
    return sorted((p for p in repo.glob("week*") if p.is_dir() and p.name[4:].isdigit()),
                  key=lambda p: int(p.name[4:]))


def _notebook_of(folder: Path) -> Path | None:
    """A week folder's ``weekN.ipynb``, else its first notebook by name, else None."""
    notebooks = sorted(folder.glob("*.ipynb"))
    named = folder / f"{folder.name}.ipynb"
    return named if named in notebooks else (notebooks[0] if notebooks else None)


def first_notebook(repo: Path = REPO) -> Path | None:
    """The notebook of the first week folder (``week1``, ``week2``, ... ``week10``, in
    number order) that has one: its ``weekN.ipynb``, else its first notebook by name."""
    for folder in week_folders(repo):
        notebook = _notebook_of(folder)
        if notebook is not None:
            return notebook
    return None


def week_notebook(week: str | int | None, repo: Path = REPO) -> Path | None:
    """The notebook ``make lab`` opens: week ``week``'s (its ``weekN.ipynb``, else its first
    notebook), or the first week's when ``week`` is None or empty. A week without a
    notebook raises ``ValueError`` naming the weeks that have one."""
    if week is None or str(week).strip() == "":
        return first_notebook(repo)
    number = str(week).strip().removeprefix("week")
    folder = repo / f"week{number}"
    notebook = _notebook_of(folder) if number.isdigit() and folder.is_dir() else None
    if notebook is None:
        have = [f.name[4:] for f in week_folders(repo) if _notebook_of(f)]
        raise ValueError(f"there is no week {str(week).strip()!r} with a notebook; "
                         f"choose one of {', '.join(have) or '(none yet)'}")
    return notebook


def settings_folder(role: str) -> Path:
    """The Jupyter configuration folder of ``role`` (``learner`` or ``instructor``)."""
    if role not in ROLES:
        raise ValueError(f"unknown role {role!r}: choose one of {', '.join(ROLES)}")
    return SETTINGS / role


def lab_environment(role: str, environ: dict[str, str] | None = None) -> dict[str, str]:
    """``environ`` (default: this process's) with ``role``'s folder first on
    ``JUPYTER_CONFIG_PATH`` (the highest priority Jupyter gives any configuration)."""
    env = dict(os.environ if environ is None else environ)
    folder = str(settings_folder(role))
    rest = [p for p in env.get("JUPYTER_CONFIG_PATH", "").split(os.pathsep) if p and p != folder]
    env["JUPYTER_CONFIG_PATH"] = os.pathsep.join([folder, *rest])
    return env


def lab_command(extra: list[str], repo: Path = REPO, notebook: Path | None = None) -> list[str]:
    """``jupyter lab`` serving ``repo``, with ``extra``, opening ``notebook`` (default: the
    first week's)."""
    command = [sys.executable, "-m", "jupyter", "lab", f"--ServerApp.root_dir={repo}",
               # a notebook just opened is not marked modified (course/classroom/contents.py)
               "--ServerApp.contents_manager_class="
               "course.classroom.contents.KernelLanguageContents"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.append("--allow-root")
    command += extra
    notebook = first_notebook(repo) if notebook is None else notebook
    if notebook is not None:
        relative = notebook.relative_to(repo).as_posix()
        if not any("default_url" in arg for arg in extra):  # yours wins
            command.append(f"--LabApp.default_url=/lab/tree/{quote(relative)}")
        command.append(str(notebook.relative_to(repo)))
    return command


def parse(argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    parser = argparse.ArgumentParser(
        prog="python -m course.classroom.lab", allow_abbrev=False,
        description="Open JupyterLab on the course (make lab [WEEK=5] [ROLE=instructor] "
        "[LAB_ARGS='...']). Unknown arguments go to jupyter lab.")
    parser.add_argument("--week", default="",
                        help="the week to open, e.g. 5 (default: the first week)")
    parser.add_argument("--role", default="learner",
                        choices=ROLES, help="learner (default) or instructor")
    return parser.parse_known_args(argv)


def main(argv: list[str] | None = None) -> int:
    args, extra = parse(list(sys.argv[1:] if argv is None else argv))
    try:
        notebook = week_notebook(args.week)
    except ValueError as error:
        print(f"make lab: {error}", file=sys.stderr)
        return 2
    command = lab_command(extra, notebook=notebook)
    where = notebook.relative_to(REPO) if notebook else "the course"
    tools = ("with nbgrader's instructor tools" if args.role == "instructor"
             else "for learners (make lab ROLE=instructor adds nbgrader's instructor tools)")
    print(f"Opening {where} in JupyterLab, {tools}. Stop with Ctrl-C.", flush=True)
    os.chdir(REPO)
    os.execve(command[0], command, lab_environment(args.role))
    return 0  # not reached: execve replaces this process


if __name__ == "__main__":
    sys.exit(main())
