"""``make lab`` opens the first week that exists, with the nbgrader extension enabled."""

from __future__ import annotations

import os
import subprocess
import sys

from course.classroom.lab import REPO, first_notebook, lab_command


def test_first_notebook_is_the_earliest_week_with_one(tmp_path):
    assert first_notebook(tmp_path) is None
    (tmp_path / "week6").mkdir()
    (tmp_path / "week6" / "week6.ipynb").write_text("{}")
    assert first_notebook(tmp_path) == tmp_path / "week6" / "week6.ipynb"
    (tmp_path / "week2").mkdir()
    (tmp_path / "week2" / "b.ipynb").write_text("{}")
    (tmp_path / "week2" / "a.ipynb").write_text("{}")
    assert first_notebook(tmp_path) == tmp_path / "week2" / "a.ipynb"


def test_lab_command_serves_the_repo_passes_extra_arguments_and_opens_the_notebook(tmp_path):
    (tmp_path / "week5").mkdir()
    (tmp_path / "week5" / "week5.ipynb").write_text("{}")
    command = lab_command(["--port=9999"], repo=tmp_path)
    assert command[1:4] == ["-m", "jupyter", "lab"]
    assert f"--ServerApp.root_dir={tmp_path}" in command
    assert "--port=9999" in command
    assert command[-1] == os.path.join("week5", "week5.ipynb")
    assert ("--allow-root" in command) == (os.geteuid() == 0)


def test_the_nbgrader_lab_extension_is_installed_and_enabled():
    # `python -m jupyterlab.labextensions` is `jupyter labextension` without a PATH lookup
    listing = subprocess.run([sys.executable, "-m", "jupyterlab.labextensions", "list"],
                             capture_output=True, text=True, cwd=REPO, check=True)
    text = listing.stdout + listing.stderr
    line = next((ln for ln in text.splitlines() if "nbgrader" in ln), "")
    assert "enabled" in line and "OK" in line, text
