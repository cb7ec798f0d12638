"""JupyterHub for one class of the crash course on one machine (docs/instructors.md).

Start it from the hub's own environment (``make hub-deps`` builds it; ``python -m
course.term.hub where`` prints its programs), as root for a real class:

    COURSE_HUB_PASSWORD=... jupyterhub -f scripts/hub/jupyterhub_config.py

tests/test_jupyterhub.py starts exactly this file. Everything listens on 127.0.0.1.
What it sets up:

- one course id, ``crash-resume``, and one shared nbgrader exchange (``COURSE_EXCHANGE``)
  created with mode 1777, so every account can create its course folder and inbox there
  and nobody can delete another's files; nbgrader itself makes ``inbound/`` 2733 (students
  drop submissions in, cannot list them) and ``outbound/`` 755;
- the ``course`` package in every server, every kernel and the grader: all of them run
  the hub environment's Python, where the package is installed;
- the instructor's server runs the formgrader on their clone of this repository
  (``COURSE_HUB_COURSE``); students' servers have the Assignments tab and Validate, not
  the formgrader, the course list or the assignment creator;
- as root, a real account per user (created when missing), each server started as its
  user (LocalProcessSpawner); as a normal user no account can be made, so every server
  runs as you in a home of its own (SimpleLocalProcessSpawner): the accounts are then
  NOT separated, which is for trying the hub out, not for a class.

Settings come from the environment (defaults in brackets):
COURSE_HUB_PASSWORD (required: the shared login password; at least 8 characters),
COURSE_HUB_STATE [/srv/crash-resume/hub]: the hub's database, secret and per-role config,
COURSE_EXCHANGE [/srv/nbgrader/exchange], COURSE_HUB_INSTRUCTOR [instructor],
COURSE_HUB_STUDENTS [ada bo] (space-separated; on a real class, your roster),
COURSE_HUB_COURSE [the instructor's home/crash-resume], COURSE_HUB_PORT [8000], with the
hub's API on COURSE_HUB_API_PORT [port+1] and the proxy's on COURSE_HUB_PROXY_API_PORT
[port+2], COURSE_HUB_PROXY [configurable-http-proxy on PATH].
"""

import json
import os
import pwd
import shutil
import subprocess
import sys
from pathlib import Path

c = get_config()  # noqa: F821 - injected by traitlets when JupyterHub loads this file
env = os.environ.get

COURSE_ID = "crash-resume"
STATE = Path(env("COURSE_HUB_STATE", "/srv/crash-resume/hub"))
EXCHANGE = Path(env("COURSE_EXCHANGE", "/srv/nbgrader/exchange"))
INSTRUCTOR = env("COURSE_HUB_INSTRUCTOR", "instructor")
STUDENTS = env("COURSE_HUB_STUDENTS", "ada bo").split()
PORT = int(env("COURSE_HUB_PORT", "8000"))
AS_ROOT = os.geteuid() == 0
BIN = Path(sys.executable).parent  # the hub environment: jupyterhub, servers, nbgrader, course
if not env("COURSE_HUB_PASSWORD"):
    sys.exit("jupyterhub_config.py: set COURSE_HUB_PASSWORD (the class's shared password)")

# ---------------------------------------------------------------- the hub and its proxy
c.JupyterHub.bind_url = f"http://127.0.0.1:{PORT}"
c.JupyterHub.hub_bind_url = f"http://127.0.0.1:{env('COURSE_HUB_API_PORT', PORT + 1)}"
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{env('COURSE_HUB_PROXY_API_PORT', PORT + 2)}"
c.ConfigurableHTTPProxy.command = [env("COURSE_HUB_PROXY", "configurable-http-proxy")]
PRIVATE = STATE / "private"  # database and cookie secret: the hub's eyes only
PRIVATE.mkdir(parents=True, exist_ok=True)
PRIVATE.chmod(0o700)
STATE.chmod(0o755)
c.JupyterHub.db_url = f"sqlite:///{PRIVATE / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(PRIVATE / "jupyterhub_cookie_secret")
c.JupyterHub.pid_file = str(PRIVATE / "jupyterhub.pid")
c.ConfigurableHTTPProxy.pid_file = str(PRIVATE / "proxy.pid")
c.JupyterHub.cleanup_servers = True  # stopping the hub stops every user's server

# ---------------------------------------------------------------------- who logs in
# JupyterHub's built-in shared-password login (DummyAuthenticator's password moved here
# in JupyterHub 5.3). Anyone with the password can log in as any listed user: use your
# institution's authenticator for a real class.
c.JupyterHub.authenticator_class = "shared-password"
c.SharedPasswordAuthenticator.user_password = env("COURSE_HUB_PASSWORD")
c.Authenticator.allowed_users = {INSTRUCTOR, *STUDENTS}


def home_of(name: str) -> Path:
    return Path(pwd.getpwnam(name).pw_dir) if AS_ROOT else STATE / "home" / name


if AS_ROOT:  # a real account per user, created when missing; each server runs as its user
    for name in [INSTRUCTOR, *STUDENTS]:
        try:
            pwd.getpwnam(name)
        except KeyError:
            subprocess.run([shutil.which("useradd") or "/usr/sbin/useradd", "--create-home",
                            "--user-group", "--shell", "/bin/bash", name], check=True)
            home_of(name).chmod(0o700)
    c.JupyterHub.spawner_class = "localprocess"
else:  # no accounts to make: one home per user, all run as you (NOT separated)
    c.JupyterHub.spawner_class = "simple"
    c.SimpleLocalProcessSpawner.home_dir_template = str(STATE / "home" / "{username}")
COURSE = Path(env("COURSE_HUB_COURSE") or home_of(INSTRUCTOR) / COURSE_ID)

# --------------------------------------------------------------------- the exchange
EXCHANGE.mkdir(parents=True, exist_ok=True)
EXCHANGE.chmod(0o1777)  # like /tmp: all may create, none may remove another's files

# ------------------------------------------------- each role's Jupyter and nbgrader config
ROLES = STATE / "jupyter"
STUDENT_NBGRADER = [
    "import os",
    "c = get_config()",
    f"c.CourseDirectory.course_id = {COURSE_ID!r}",
    f"c.Exchange.root = {str(EXCHANGE)!r}",
]
if not AS_ROOT:  # nbgrader names a submission after the Unix account: here all are you
    STUDENT_NBGRADER.append("c.CourseDirectory.student_id = os.environ['JUPYTERHUB_USER']")
INSTRUCTOR_ONLY = ["formgrader", "course_list"]
FILES = {
    "student/nbgrader_config.py": "\n".join(STUDENT_NBGRADER),
    "student/jupyter_server_config.json": json.dumps({"ServerApp": {"jpserver_extensions": {
        f"nbgrader.server_extensions.{name}": False for name in INSTRUCTOR_ONLY}}}),
    "student/labconfig/page_config.json": json.dumps({"disabledExtensions": {
        f"@jupyter/nbgrader:{name}": True
        for name in ("formgrader", "course-list", "create-assignment")}}),
    # The formgrader grades in the instructor's clone, with the course's nbgrader_config.py
    # (its preprocessors come from the course package, installed in this environment).
    "instructor/nbgrader_config.py": "\n".join([
        "c = get_config()",
        f"load_subconfig({str(COURSE / 'nbgrader_config.py')!r})",
        f"c.CourseDirectory.root = {str(COURSE)!r}",
        f"c.CourseDirectory.course_id = {COURSE_ID!r}",
        f"c.Exchange.root = {str(EXCHANGE)!r}",
    ]),
}
for relative, text in FILES.items():
    (ROLES / relative).parent.mkdir(parents=True, exist_ok=True)
    (ROLES / relative).write_text(text + "\n")
for folder in [ROLES, *ROLES.rglob("*")]:
    folder.chmod(0o755 if folder.is_dir() else 0o644)

# --------------------------------------------------------------- each user's server
c.Spawner.cmd = [str(BIN / "jupyterhub-singleuser")]
c.Spawner.ip = "127.0.0.1"
c.Spawner.default_url = "/lab"
c.Spawner.start_timeout = 180  # a first JupyterLab start on a busy machine is slow
c.Spawner.http_timeout = 180
# nbgrader starts alembic (and kernels start python) by name: the hub environment first.
c.Spawner.environment = {"PATH": f"{BIN}:/usr/local/bin:/usr/bin:/bin",
                         "COURSE_EXCHANGE": str(EXCHANGE)}


def per_role(spawner):
    """The instructor gets the formgrader on the course; a student the student config."""
    name = spawner.user.name
    role = "instructor" if name == INSTRUCTOR else "student"
    if role == "instructor" and not (COURSE / "nbgrader_config.py").is_file():
        raise RuntimeError(f"{name}'s course folder {COURSE} has no nbgrader_config.py: "
                           "clone the course repository there first")
    spawner.environment = {**spawner.environment,
                           "JUPYTER_CONFIG_PATH": str(ROLES / role)}


c.Spawner.pre_spawn_hook = per_role
