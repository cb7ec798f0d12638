"""Graded as an ordinary account in a fresh clone with the sandbox on: an honest
notebook's row carries no note (issue 43: every kernel's bytecode-cache writes into the
read-only ``course/`` package were logged as attempts, on every student's row)."""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig

import pytest
from test_as_a_student import _console_scripts
from weeks import REPO

from course.sandbox.jail import availability

pytestmark = pytest.mark.slow


@pytest.mark.sandbox
def test_an_honest_notebook_has_no_note_as_an_ordinary_account_in_a_fresh_clone():
    if os.geteuid() != 0:
        pytest.skip("needs root, to run as another account (CI runs as root)")
    if availability():
        pytest.skip(f"no sandbox here: {availability()}")
    from course.host.accounts import (
        NoUnprivilegedAccount,
        fresh_copy_for,
        python_for,
        run_bare,
        unprivileged_account,
    )

    try:
        account = unprivileged_account()
    except NoUnprivilegedAccount as error:
        pytest.skip(f"no unprivileged account: {error}")
    home, clone = fresh_copy_for(account, REPO, "course-instructor-")
    try:
        assert not list(clone.rglob("__pycache__"))  # a fresh clone: no bytecode yet
        python = python_for(account, home)
        if python is None:
            pytest.skip(f"no Python {sys.version_info.major}.{sys.version_info.minor} that "
                        f"{account.pw_name} can run")
        bindir = _console_scripts(account, home, python)
        site = sysconfig.get_paths()["purelib"]
        env = {"PATH": f"{bindir}:/usr/bin:/bin", "PYTHONPATH": f"{clone}{os.pathsep}{site}",
               "PYTHONNOUSERSITE": "1", "JUPYTER_PATH": f"{sys.prefix}/share/jupyter",
               "JUPYTER_CONFIG_PATH": f"{sys.prefix}/etc/jupyter",
               "COURSE_GRADING_SANDBOX": "on"}
        for week, full in ((2, None), (5, 57)):
            for submission in (f"solutions/week{week}", f"week{week}"):
                done = run_bare(account, [python, "-m", "course.grader", "--week", str(week),
                                          "--submission", submission],
                                cwd=clone, home=home, env=env, reach=[sys.prefix],
                                timeout=900)
                output = done.stdout + done.stderr
                assert done.returncode == 0, output[-3000:]
                assert not [line for line in done.stdout.splitlines()
                            if line.startswith("note:")], (submission, output[-3000:])
                if full and submission.startswith("solutions"):
                    assert f"week{week}: {full}/{full}" in done.stdout, output[-3000:]
    finally:
        shutil.rmtree(home.parent, ignore_errors=True)
