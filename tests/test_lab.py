"""``make lab``: which week it opens, and what a learner's and an instructor's lab contain.

The browser tests (tests/browser/test_student_experience.py) look at the same labs in
Chromium; these check the launcher's choices and the running server's answers directly.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import subprocess
import sys
import urllib.error
from pathlib import Path

import pytest

from course.classroom.lab import (
    REPO,
    ROLES,
    first_notebook,
    lab_command,
    lab_environment,
    settings_folder,
    week_notebook,
)


def nbgrader_prefix() -> Path:
    """The environment nbgrader is installed in (``<prefix>/lib/pythonX.Y/site-packages/
    nbgrader``): ``sys.prefix`` is another one in a student account's run, which reads this
    virtualenv's packages in place."""
    import nbgrader

    return Path(nbgrader.__file__).resolve().parents[4]


def nbgrader_lab() -> Path:
    """nbgrader's JupyterLab extension, where Jupyter looks for it (``JUPYTER_PATH`` first),
    else in nbgrader's own environment."""
    from jupyter_core.paths import jupyter_path

    found = [Path(p) / "@jupyter" / "nbgrader" for p in jupyter_path("labextensions")]
    return next((f for f in found if f.is_dir()),
                nbgrader_prefix() / "share" / "jupyter" / "labextensions" / "@jupyter" / "nbgrader")


INSTRUCTOR_PLUGINS = {"@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:course-list",
                      "@jupyter/nbgrader:create-assignment"}
INSTRUCTOR_SERVER = {"nbgrader.server_extensions.formgrader",
                     "nbgrader.server_extensions.course_list"}


def test_first_notebook_is_the_earliest_week_with_one(tmp_path):
    assert first_notebook(tmp_path) is None
    (tmp_path / "week6").mkdir()
    (tmp_path / "week6" / "week6.ipynb").write_text("{}")
    assert first_notebook(tmp_path) == tmp_path / "week6" / "week6.ipynb"
    (tmp_path / "week2").mkdir()
    (tmp_path / "week2" / "b.ipynb").write_text("{}")
    (tmp_path / "week2" / "a.ipynb").write_text("{}")
    assert first_notebook(tmp_path) == tmp_path / "week2" / "a.ipynb"


def test_week_chooses_the_notebook_and_a_missing_week_names_the_ones_there_are(tmp_path):
    for week in (1, 5, 10):
        (tmp_path / f"week{week}").mkdir()
        (tmp_path / f"week{week}" / "notes.ipynb").write_text("{}")
        (tmp_path / f"week{week}" / f"week{week}.ipynb").write_text("{}")
    (tmp_path / "week3").mkdir()  # a folder without a notebook
    assert week_notebook(None, tmp_path) == week_notebook("", tmp_path) == (
        tmp_path / "week1" / "week1.ipynb")
    assert week_notebook("5", tmp_path) == tmp_path / "week5" / "week5.ipynb"
    assert week_notebook(10, tmp_path) == tmp_path / "week10" / "week10.ipynb"
    assert week_notebook("week5", tmp_path) == tmp_path / "week5" / "week5.ipynb"
    for wrong in ("3", "8", "five", "../week5"):
        with pytest.raises(ValueError, match=r"choose one of 1, 5, 10$"):
            week_notebook(wrong, tmp_path)


def test_lab_command_serves_the_repo_passes_extra_arguments_and_opens_the_notebook(tmp_path):
    for week in (1, 5):
        (tmp_path / f"week{week}").mkdir()
        (tmp_path / f"week{week}" / f"week{week}.ipynb").write_text("{}")
    command = lab_command(["--port=9999"], repo=tmp_path)
    assert command[1:4] == ["-m", "jupyter", "lab"]
    assert f"--ServerApp.root_dir={tmp_path}" in command
    assert "--port=9999" in command
    assert command[-1] == os.path.join("week1", "week1.ipynb")
    assert ("--allow-root" in command) == (os.geteuid() == 0)
    chosen = lab_command([], repo=tmp_path, notebook=week_notebook(5, tmp_path))
    assert chosen[-1] == os.path.join("week5", "week5.ipynb")
    # the printed address (--no-browser) opens the week, not the Launcher; yours wins
    assert "--LabApp.default_url=/lab/tree/week5/week5.ipynb" in chosen
    mine = lab_command(["--LabApp.default_url=/lab"], repo=tmp_path)
    assert [a for a in mine if "default_url" in a] == ["--LabApp.default_url=/lab"]


def test_each_role_puts_its_own_settings_first_and_keeps_the_callers():
    learner = lab_environment("learner", {"JUPYTER_CONFIG_PATH": "/etc/mine", "HOME": "/h"})
    assert learner["JUPYTER_CONFIG_PATH"].split(os.pathsep) == [
        str(settings_folder("learner")), "/etc/mine"]
    assert learner["HOME"] == "/h"
    assert lab_environment("instructor", {})["JUPYTER_CONFIG_PATH"] == str(
        settings_folder("instructor"))
    with pytest.raises(ValueError, match="choose one of learner, instructor"):
        settings_folder("teacher")


def test_the_learners_settings_name_nbgraders_real_plugins_and_extensions():
    """Disabling a plugin id nbgrader does not have would silently do nothing."""
    bundle = "".join(p.read_text(errors="replace") for p in nbgrader_lab().glob("static/*.js"))
    assert bundle, f"no nbgrader JupyterLab bundle in {nbgrader_lab()}"
    assert all(f'id:"{plugin}"' in bundle or f'"{plugin}"' in bundle
               for plugin in INSTRUCTOR_PLUGINS), "nbgrader renamed a JupyterLab plugin"
    learner = settings_folder("learner")
    page = json.loads((learner / "labconfig" / "page_config.json").read_text())
    assert set(page["disabledExtensions"]) == INSTRUCTOR_PLUGINS
    server = json.loads((learner / "jupyter_server_config.json").read_text())
    assert server["ServerApp"]["jpserver_extensions"] == {
        **dict.fromkeys(INSTRUCTOR_SERVER, False),
        # Validate answered by the course's short validator (course/grader/validate.py)
        "nbgrader.server_extensions.validate_assignment": False,
        "course.grader.validate": True}
    installed = json.loads((nbgrader_prefix() / "etc" / "jupyter" / "jupyter_server_config.d"
                            / "nbgrader.json").read_text())["ServerApp"]["jpserver_extensions"]
    assert set(installed) > INSTRUCTOR_SERVER
    assert not (settings_folder("instructor") / "labconfig" / "page_config.json").exists()
    assert not (settings_folder("instructor") / "jupyter_server_config.json").exists()


def test_make_lab_passes_week_role_and_lab_args_on():
    dry = subprocess.run(["make", "-n", "--no-print-directory", "lab", "WEEK=5",
                          "ROLE=instructor", "LAB_ARGS=--no-browser --port=9999"],
                         capture_output=True, text=True, cwd=REPO, check=True).stdout
    line = " ".join(dry.replace("\\\n", " ").split())
    assert re.search(r"-m course\.classroom\.lab --week '5' --role 'instructor' "
                     r"--no-browser --port=9999$", line, re.M), line
    plain = subprocess.run(["make", "-n", "--no-print-directory", "lab"], capture_output=True,
                           text=True, cwd=REPO, check=True).stdout
    assert "--week" not in plain and "--role" not in plain
    helped = subprocess.run(["make", "--no-print-directory", "help"], capture_output=True,
                            text=True, cwd=REPO, check=True).stdout
    assert all(word in helped for word in ("WEEK=5", "ROLE=instructor", "LAB_ARGS="))


def test_a_week_without_a_notebook_stops_before_jupyter_starts():
    done = subprocess.run([sys.executable, "-m", "course.classroom.lab", "--week", "99"],
                          capture_output=True, text=True, cwd=REPO, timeout=60)
    assert done.returncode == 2
    assert re.search(r"make lab: there is no week '99' with a notebook; choose one of 1, ",
                     done.stderr), done.stderr


def test_the_nbgrader_lab_extension_is_installed_and_enabled():
    # `python -m jupyterlab.labextensions` is `jupyter labextension` without a PATH lookup
    listing = subprocess.run([sys.executable, "-m", "jupyterlab.labextensions", "list"],
                             capture_output=True, text=True, cwd=REPO, check=True)
    text = listing.stdout + listing.stderr
    line = next((ln for ln in text.splitlines() if "nbgrader" in ln), "")
    assert "enabled" in line and "OK" in line, text


# ------------------------------------------------------------------ a real server per role
@pytest.fixture(params=ROLES)
def running(request, tmp_path):
    # the browser tests' server helpers (their isolated settings leave the news alone)
    sys.path.insert(0, str(Path(__file__).parent / "browser"))
    try:
        from labserver import LabServer, free_port, isolated_env, lab_args
    finally:
        sys.path.remove(str(Path(__file__).parent / "browser"))
    env = isolated_env(tmp_path / "jupyter")
    port, token = free_port(), secrets.token_urlsafe(16)
    server = LabServer.start(
        [sys.executable, "-m", "course.classroom.lab", "--role", request.param, "--week", "5",
         "--no-browser", *lab_args(port, token)],
        cwd=REPO, env=env, port=port, token=token, log_path=tmp_path / "lab.log")
    try:
        yield request.param, server
    finally:
        server.stop()


def _status(server, path: str) -> int:
    try:
        server.api("GET", path)
        return 200
    except urllib.error.HTTPError as error:
        return error.code


@pytest.mark.slow  # a real JupyterLab per role (the browser checks the same pages too)
def test_the_running_lab_has_its_roles_tools_and_no_news_question(running):
    role, server = running
    assert "Opening week5/week5.ipynb in JupyterLab" in server.log_tail()
    page = _page_config(server)
    disabled = set(page.get("disabledExtensions") or ())
    notification = server.api("GET", "/lab/api/settings/"
                              "@jupyterlab/apputils-extension:notification")
    defaults = {name: spec.get("default") for name, spec in
                notification["schema"]["properties"].items()}
    assert defaults["fetchNews"] == "false" and defaults["checkForUpdates"] is False
    if role == "learner":
        assert disabled >= INSTRUCTOR_PLUGINS, disabled
        assert _status(server, "/formgrader/api/assignments") == 404
        assert _status(server, "/formgraders") == 404
    else:
        assert not INSTRUCTOR_PLUGINS & disabled, disabled
        assert _status(server, "/formgraders") == 200
    # what a learner keeps: Validate's and the Assignments list's server extensions
    assert _status(server, "/assignments?course_id=") != 404
    assert "@jupyter/nbgrader:validate-assignment" not in disabled


def _page_config(server) -> dict:
    import urllib.request
    with urllib.request.urlopen(f"{server.url}/lab?token={server.token}", timeout=30) as answer:
        html = answer.read().decode()
    found = re.search(r'<script id="jupyter-config-data" type="application/json">(.*?)</script>',
                      html, re.S)
    assert found, "JupyterLab's page has no jupyter-config-data"
    return json.loads(found.group(1))


def test_the_lab_hands_python_notebooks_over_with_the_kernels_language_info():
    """What JupyterLab compares when the kernel starts (else the tab is marked modified);
    the browser test opens every week and checks the tab itself."""
    from ipykernel.ipkernel import IPythonKernel

    from course.classroom.contents import with_kernel_language

    release = json.loads((REPO / "week1" / "week1.ipynb").read_text())
    assert with_kernel_language(release)["metadata"]["language_info"] == (
        IPythonKernel.language_info)
    other = {"metadata": {"kernelspec": {"language": "R", "name": "ir"},
                          "language_info": {"name": "R"}}}
    assert with_kernel_language(json.loads(json.dumps(other))) == other
    assert ("--ServerApp.contents_manager_class=course.classroom.contents."
            "KernelLanguageContents") in lab_command([])
