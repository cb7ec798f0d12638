"""A student is never root: resolve the pinned environment and run the fast tests as one.

CI and most checks run as root, and root's pip can see packages a normal user's
pip cannot (once a pin only root could install made ``make setup`` fail for every
student). So ``make test-all`` does the student's part as an unprivileged account, the
same one the throwaway Postgres server runs as (:mod:`course.host.accounts`):

1. a fresh copy of the repository's tracked files, owned by that account;
2. a virtualenv made by that account from a Python it can run, in it the pinned pip
   (as ``make setup`` does) and ``pip install --dry-run -c constraints.txt -e
   '.[postgres,agents,browser]'``, with a bare environment (no root configuration, no
   inherited ``PIP_*``);
3. the fast tests (``-m "not slow and not browser"``) of the files that use what behaves
   differently for a normal user (:func:`account_sensitive_files`: Postgres, which then
   runs as that account, the grading and its sandbox, Jupyter's and nbgrader's folders,
   the classroom) run by that account, with the
   packages of this virtualenv read in place (``PYTHONPATH``, and ``JUPYTER_PATH`` for
   the nbgrader extensions) by a Python of the same version it can run, Postgres
   included. A full install as that account would take minutes; the dry run in step
   2 already proves the account's pip finds every pin.

Step 2 waits on the package index and step 3 on the processor, so the dry run goes on
in the background while the fast tests run.

As a normal user it is your own account, which is the point of the check: then step 3
is skipped, because this very run's fast tests already ran as you. Where no
unprivileged account or no Python it can run can be had, the test skips with one line.
"""

from __future__ import annotations

import os
import pwd
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from ci import in_ci

from course.host.accounts import (
    NoUnprivilegedAccount,
    current_or_unprivileged,
    fresh_copy_for,
    python_for,
    run_bare,
    start_bare,
)

REPO = Path(__file__).resolve().parent.parent
EXTRAS = "postgres,agents,browser"
# What a test file names when it uses a part that behaves differently for a normal user.
ACCOUNT_SENSITIVE = re.compile(
    r"course\.storage|course\.grading|course\.classroom|nbgrader|jupyter|[Pp]ostgres")


def account_sensitive_files() -> list[str]:
    """The test files the student's account runs. The others (the ledger, the graphs, the
    crash harness, the audit) fork and write only in their own temporary folders, the same
    for every account, and this run has already run them."""
    return sorted(str(path.relative_to(REPO)) for path in (REPO / "tests").glob("test_*.py")
                  if ACCOUNT_SENSITIVE.search(path.read_text()))


def _as(account: pwd.struct_passwd, command: list[str], *, cwd: Path, home: Path,
        extra_env: dict[str, str] | None = None, reach: list[str] | None = None,
        ) -> subprocess.CompletedProcess:
    env = {"CI": "true"} if in_ci() else {}  # the student's run is as required as ours
    return run_bare(account, command, cwd=cwd, home=home, env={**env, **(extra_env or {})},
                    reach=reach)


@pytest.fixture(scope="module")
def student(tmp_path_factory):
    """(account, its home, a fresh copy of the repository it owns, a Python it can run)."""
    try:
        account = current_or_unprivileged()
    except NoUnprivilegedAccount as error:
        pytest.skip(f"no unprivileged account to test as: {error}")
    home, clone = fresh_copy_for(account, REPO, "course-student-")
    python = python_for(account, home)
    if python is None:
        shutil.rmtree(home.parent, ignore_errors=True)
        pytest.skip(f"no Python {sys.version_info.major}.{sys.version_info.minor} that "
                    f"{account.pw_name} can run")
    yield account, home, clone, python
    shutil.rmtree(home.parent, ignore_errors=True)


@pytest.fixture(scope="module")
def resolving(student):
    """The account's ``pip install --dry-run`` of the pinned environment, started now and
    left running in the background (a fresh virtualenv of its own first)."""
    account, home, clone, python = student
    made = _as(account, [python, "-m", "venv", str(home / "venv")], cwd=clone, home=home)
    assert made.returncode == 0, made.stderr
    pip = [str(home / "venv" / "bin" / "python"), "-m", "pip", "install", "--quiet",
           "--disable-pip-version-check", "-c", "constraints.txt"]
    upgraded = _as(account, [*pip, "pip"], cwd=clone, home=home)  # as make setup, pip first
    assert upgraded.returncode == 0, f"as {account.pw_name}: {upgraded.stderr[-3000:]}"
    job = start_bare(account, [*pip, "--dry-run", "-e", f".[{EXTRAS}]"],
                     cwd=clone, home=home, log=home.parent / "pip-dry-run.log",
                     env={"CI": "true"} if in_ci() else None)
    yield job
    if job.poll() is None:
        job.kill()
        job.wait()


def _console_scripts(account: pwd.struct_passwd, home: Path, python: str) -> Path:
    """``alembic``, ``jupyter`` and ``nbgrader`` for ``python`` (nbgrader starts ``alembic``
    by name): what this virtualenv's ``bin/`` gives, for an interpreter the account can run."""
    bindir = home / "bin"
    bindir.mkdir(exist_ok=True)
    for name, module in (("alembic", "alembic.config"), ("jupyter", "jupyter_core.command"),
                         ("nbgrader", "nbgrader.apps.nbgraderapp")):
        script = bindir / name
        entry = f"import sys; from {module} import main; sys.exit(main())"
        script.write_text(f'#!/bin/sh\nexec {python} -c "{entry}" "$@"\n')
        script.chmod(0o755)
    os.chown(bindir, account.pw_uid, account.pw_gid)
    return bindir


@pytest.mark.slow
def test_a_student_runs_the_fast_tests(student, resolving):  # the pins resolve meanwhile
    account, home, clone, python = student
    if account.pw_uid == os.geteuid():
        pytest.skip("not root: this run's own fast tests already ran as you, a student's "
                    "account (the pins are still resolved as you)")
    site = sysconfig.get_paths()["purelib"]
    reach = [sys.prefix]  # this virtualenv, put back for the account if its folder is private
    reads = _as(account, [python, "-c", "import langgraph, nbgrader, pytest"], cwd=clone,
                home=home, extra_env={"PYTHONPATH": site}, reach=reach)
    assert reads.returncode == 0, (
        f"{account.pw_name} cannot read this virtualenv's packages in {site}: "
        f"{reads.stderr.strip().splitlines()[-1:]}")
    bindir = _console_scripts(account, home, python)
    ran = _as(account, [python, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                        "-m", "not slow and not browser", *account_sensitive_files()],
              cwd=clone, home=home,
              extra_env={"PYTHONPATH": f"{clone}{os.pathsep}{site}", "PYTHONNOUSERSITE": "1",
                         "PATH": f"{bindir}:/usr/local/bin:/usr/bin:/bin",
                         # where this virtualenv keeps Jupyter's extensions and their config
                         "JUPYTER_PATH": f"{sys.prefix}/share/jupyter",
                         "JUPYTER_CONFIG_PATH": f"{sys.prefix}/etc/jupyter"}, reach=reach)
    tail = "\n".join((ran.stdout + ran.stderr).strip().splitlines()[-15:])
    assert ran.returncode == 0, f"the fast tests fail as {account.pw_name}:\n{tail}"
    # under CI the nested run has CI=true too: a Postgres test that skips fails it (tests/ci.py)
    assert " passed" in tail.splitlines()[-1], tail


def test_the_student_runs_every_file_that_uses_postgres_the_grading_or_jupyter():
    chosen = account_sensitive_files()
    for needed in ("tests/test_postgres_server.py", "tests/test_grading_pieces.py",
                   "tests/test_lab.py", "tests/test_idempotency_conformance.py"):
        assert needed in chosen
    assert "tests/test_ledger.py" not in chosen and "tests/test_as_a_student.py" in chosen


@pytest.mark.slow
def test_a_student_can_resolve_every_pin(student, resolving):
    account, home = student[0], student[1]
    try:
        resolving.wait(timeout=600)
    except subprocess.TimeoutExpired:
        pytest.fail(f"as {account.pw_name}, pip's dry run did not finish in 10 minutes")
    said = (home.parent / "pip-dry-run.log").read_text().strip()
    assert resolving.returncode == 0, (
        f"as {account.pw_name}, pip cannot install the pinned environment "
        f"(constraints.txt pins something only root's pip can see?):\n{said[-3000:]}")
