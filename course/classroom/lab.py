"""``python -m course.classroom.lab``: open JupyterLab on the course (what ``make lab`` runs).

Serves the repository root, opens the first week that exists (``week1/`` …
``week6/``), and adds ``--allow-root`` when run as root (JupyterLab refuses
root otherwise). Extra arguments go straight to ``jupyter lab``
(``make lab LAB_ARGS="--port=9999 --no-browser"``).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def first_notebook(repo: Path = REPO) -> Path | None:
    """The first notebook of the first week folder (``week1``, ``week2``, ... ``week10``,
    in number order) that has one."""
    folders = sorted((p for p in repo.glob("week*") if p.is_dir() and p.name[4:].isdigit()),
                     key=lambda p: int(p.name[4:]))
    for folder in folders:
        notebooks = sorted(folder.glob("*.ipynb"))
        if notebooks:
            return notebooks[0]
    return None


def lab_command(extra: list[str], repo: Path = REPO) -> list[str]:
    command = [sys.executable, "-m", "jupyter", "lab", f"--ServerApp.root_dir={repo}"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.append("--allow-root")
    command += extra
    notebook = first_notebook(repo)
    if notebook is not None:
        command.append(str(notebook.relative_to(repo)))
    return command


def main(argv: list[str] | None = None) -> None:
    command = lab_command(list(sys.argv[1:] if argv is None else argv))
    notebook = first_notebook()
    print(f"Opening {notebook.relative_to(REPO) if notebook else 'the course'} in JupyterLab. "
          "Stop with Ctrl-C.", flush=True)
    os.chdir(REPO)
    os.execv(command[0], command)


if __name__ == "__main__":
    main()
