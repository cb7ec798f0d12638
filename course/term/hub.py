"""The environment a class's JupyterHub runs from, built once per set of pins (``make hub-deps``).

A hub starts every user's server as that user, so the Python it runs must be one every
account can run and read: not the course's ``.venv`` (its interpreter may sit in a
private home such as ``/root/.pyenv``). :func:`ensure` builds, next to nothing else:

- ``venv/``: a virtualenv made from a Python every account can run
  (:func:`course.host.accounts.python_for`), holding this repository's ``course``
  package installed non-editable from a copy of the git-tracked files, with the
  ``hub`` extra (``jupyterhub``), all pinned by ``constraints.txt``;
- ``proxy/``: JupyterHub's proxy, ``configurable-http-proxy``, installed with
  ``npm ci`` from ``scripts/hub/package-lock.json``;
- ``installed.json``: the stamp. The folder's name carries a hash of
  ``constraints.txt``, ``pyproject.toml``'s dependency tables, the proxy's lock file and
  the Python version (:func:`fingerprint`), so a new pin means a new folder; the stamp
  also holds a hash of the ``course`` package's tracked files and ``pyproject.toml``
  (:func:`course_hash`), and when only those changed the package alone is reinstalled
  (seconds, not minutes). Folders of older pins unused for two weeks are removed.

Where: ``/var/lib/crashcourse/hub-<hash>`` as root (every folder world-readable, so the
class's accounts can run it), ``~/.cache/crashcourse/hub-<hash>`` otherwise;
``COURSE_HUB_HOME`` replaces the parent folder. Builds and hub runs take a file lock
(:func:`using`): a build waits for hubs that use the folder, a hub waits for a build.

When something cannot be installed, :class:`HubUnavailable` says why in one sentence.
``python -m course.term.hub ensure`` (``make hub-deps``) prints nothing when the
environment is ready, one line when it built or updated it, and one line, still
exiting 0, when it could not (the hub test then skips with that line, or fails in CI);
``python -m course.term.hub where`` prints the programs a class's hub runs.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from course.base.npm import npm_ci, world_readable
from course.host.accounts import (
    NoUnprivilegedAccount,
    current_or_unprivileged,
    machine_cache,
    python_for,
    run_bare,
)
from course.host.checkout import copy_tracked, tracked_files

REPO = Path(__file__).resolve().parents[2]
HUB_FILES = Path("scripts") / "hub"
CONFIG = HUB_FILES / "jupyterhub_config.py"
DEPENDENCY_FILES = ("constraints.txt", str(HUB_FILES / "package.json"),
                    str(HUB_FILES / "package-lock.json"))
EXTRA = "hub"


class HubUnavailable(RuntimeError):
    """The hub's environment cannot be built here; the message is one sentence saying why."""


@dataclass(frozen=True)
class HubEnv:
    """A built hub environment (see the module docstring)."""

    root: Path

    @property
    def python(self) -> Path:
        return self.root / "venv" / "bin" / "python"

    @property
    def bin(self) -> Path:
        return self.root / "venv" / "bin"

    @property
    def jupyterhub(self) -> Path:
        return self.bin / "jupyterhub"

    @property
    def proxy(self) -> Path:
        return self.root / "proxy" / "node_modules" / ".bin" / "configurable-http-proxy"

    @property
    def config(self) -> Path:
        """The hub's configuration, a world-readable copy of ``scripts/hub/
        jupyterhub_config.py`` (the hub may run as an account that cannot read the clone)."""
        return self.root / "jupyterhub_config.py"

    @property
    def stamp(self) -> Path:
        return self.root / "installed.json"

    def installed(self) -> dict:
        try:
            return json.loads(self.stamp.read_text())
        except (OSError, ValueError):
            return {}


# -------------------------------------------------------------------- where and which
def hub_home() -> Path:
    """The folder that holds the hub environments (see the module docstring)."""
    if os.environ.get("COURSE_HUB_HOME"):
        return Path(os.environ["COURSE_HUB_HOME"])
    return machine_cache()


def fingerprint(repo: Path = REPO) -> str:
    """Twelve hex digits naming the dependencies: the pins, pyproject's dependency tables
    (not its tool settings: a new pytest marker rebuilds nothing), the proxy's lock, the
    Python version."""
    digest = hashlib.sha256(f"python{sys.version_info.major}.{sys.version_info.minor}".encode())
    pyproject = tomllib.loads((Path(repo) / "pyproject.toml").read_text())
    project = pyproject.get("project", {})
    wanted = {"build-system": pyproject.get("build-system"),
              **{key: project.get(key) for key in ("requires-python", "dependencies",
                                                    "optional-dependencies")}}
    digest.update(json.dumps(wanted, sort_keys=True).encode())
    for name in DEPENDENCY_FILES:
        digest.update(name.encode() + b"\0" + (Path(repo) / name).read_bytes() + b"\0")
    return digest.hexdigest()[:12]


def course_hash(repo: Path = REPO) -> str:
    """A hash of what the installed package is made from: the ``course`` package's tracked
    files and ``pyproject.toml``, as they are on disk now, and the hub's configuration."""
    digest = hashlib.sha256()
    for name in sorted(tracked_files(repo)):
        if (name.startswith("course/") or name in ("pyproject.toml", str(CONFIG))) and (
                Path(repo) / name).is_file():
            digest.update(name.encode() + b"\0" + (Path(repo) / name).read_bytes() + b"\0")
    return digest.hexdigest()[:12]


def location(repo: Path = REPO) -> HubEnv:
    return HubEnv(hub_home() / f"hub-{fingerprint(repo)}")


# ------------------------------------------------------------------------- locking
@contextlib.contextmanager
def _locked(env: HubEnv, mode: int) -> Iterator[None]:
    env.root.parent.mkdir(parents=True, exist_ok=True)
    lock_path = env.root.parent / f".{env.root.name}.lock"
    with open(lock_path, "a") as handle:
        fcntl.flock(handle, mode)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@contextlib.contextmanager
def using(repo: Path = REPO) -> Iterator[HubEnv]:
    """:func:`ensure` the environment, then hold it (no rebuild) while the block runs."""
    for _ in range(3):
        env = ensure(repo)  # HubUnavailable first, if the repository cannot be read
        wanted = course_hash(repo)
        with _locked(env, fcntl.LOCK_SH):
            if env.installed().get("course") == wanted:  # not swapped since ensure()
                with contextlib.suppress(OSError):
                    os.utime(env.stamp)  # last used: see _prune
                yield env
                return
    raise HubUnavailable(f"{env.root} keeps being rebuilt by another checkout")


# ------------------------------------------------------------------------ building
def _run(step: str, command: list[str], **kwargs) -> None:
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=1800, **kwargs)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise HubUnavailable(f"{step} failed: {error}") from None
    if done.returncode:
        lines = [ln for ln in (done.stderr + done.stdout).splitlines() if ln.strip()]
        raise HubUnavailable(f"{step} failed: {lines[-1].strip() if lines else done.returncode}")


def _python_every_account_can_run() -> str:
    try:
        account = current_or_unprivileged()
    except NoUnprivilegedAccount as error:
        raise HubUnavailable(str(error)) from None
    with tempfile.TemporaryDirectory(prefix="hub-python-") as scratch:
        home = Path(scratch)
        home.chmod(0o755)
        (home / "tmp").mkdir()
        (home / "tmp").chmod(0o1777)
        python = python_for(account, home)
    if python is None:
        raise HubUnavailable(
            f"no Python {sys.version_info.major}.{sys.version_info.minor} with venv that "
            f"{account.pw_name} can run (install python3-venv, or a Python outside a private "
            "home)")
    return python


def _check_as_another_account(env: HubEnv) -> None:
    """As root: the class's accounts (here the course's unprivileged one) can run it."""
    if os.geteuid() != 0:
        return
    account = current_or_unprivileged()
    with tempfile.TemporaryDirectory(prefix="hub-check-") as scratch:
        home = Path(scratch)
        home.chmod(0o755)
        (home / "tmp").mkdir()
        (home / "tmp").chmod(0o1777)
        done = run_bare(account, [str(env.python), "-c",
                                  "import course, jupyterhub, nbgrader, jupyterlab"],
                        cwd=home, home=home, timeout=120)
    if done.returncode:
        last = (done.stderr.strip().splitlines() or ["?"])[-1]
        raise HubUnavailable(f"{account.pw_name} cannot run the hub's Python ({last})")


def _install_course(env: HubEnv, repo: Path, *, with_dependencies: bool) -> None:
    with tempfile.TemporaryDirectory(prefix="hub-course-") as scratch:
        source = copy_tracked(repo, Path(scratch) / "course")
        command = [str(env.python), "-m", "pip", "install", "--quiet",
                   "--disable-pip-version-check", "--no-warn-script-location",
                   "-c", str(source / "constraints.txt")]
        if with_dependencies:
            command.append(f"{source}[{EXTRA}]")
        else:  # the same pins are installed already: only the package itself changed
            command += ["--no-deps", "--force-reinstall", str(source)]
        _run(f"pip install of the course into {env.root}", command, cwd=scratch)
        shutil.copyfile(source / CONFIG, env.config)
        env.config.chmod(0o644)


def _tools() -> tuple[str, str]:
    """(npm, a Python every account can run), or :class:`HubUnavailable` saying which is
    missing, before anything is built."""
    npm = shutil.which("npm")
    if npm is None:
        raise HubUnavailable("npm is not installed (JupyterHub's proxy, "
                             "configurable-http-proxy, installs with npm; install Node.js 20+)")
    return npm, _python_every_account_can_run()


def _build(env: HubEnv, repo: Path, npm: str, python: str) -> None:
    """Build in place (a venv's scripts name the folder they were made in); the stamp is
    written last, so a half-built folder is never taken for a built one."""
    shutil.rmtree(env.root, ignore_errors=True)
    env.root.mkdir(parents=True)
    try:
        _run("creating the hub's virtualenv", [python, "-m", "venv", str(env.root / "venv")])
        _install_course(env, repo, with_dependencies=True)
        proxy = env.root / "proxy"
        proxy.mkdir()
        npm_ci(npm, Path(repo) / HUB_FILES, proxy, "configurable-http-proxy", HubUnavailable)
        if not env.proxy.exists():
            raise HubUnavailable("npm ci finished but configurable-http-proxy is missing")
        world_readable(env.root)
        _check_as_another_account(env)
    except BaseException:
        shutil.rmtree(env.root, ignore_errors=True)
        raise


def _versions(env: HubEnv) -> dict[str, str]:
    done = subprocess.run(
        [str(env.python), "-c", "import jupyterhub, nbgrader; "
         "print(jupyterhub.__version__, nbgrader.__version__)"],
        capture_output=True, text=True, timeout=120)
    hub_version, _, nbgrader_version = done.stdout.strip().partition(" ")
    lock = json.loads((env.root / "proxy" / "package-lock.json").read_text())
    proxy = lock["packages"].get("node_modules/configurable-http-proxy", {}).get("version", "?")
    return {"jupyterhub": hub_version, "nbgrader": nbgrader_version,
            "configurable-http-proxy": proxy}


def ensure(repo: Path = REPO, say=None) -> HubEnv:
    """The hub environment for ``repo``'s pins and ``course`` package, built or updated when
    needed (see the module docstring); :class:`HubUnavailable` when it cannot be."""
    repo = Path(repo)
    try:
        env, wanted = location(repo), course_hash(repo)
    except (OSError, subprocess.CalledProcessError) as error:
        raise HubUnavailable(f"cannot read the repository's tracked files: {error}") from None
    stamp = env.installed()
    if stamp.get("dependencies") == env.root.name and stamp.get("course") == wanted:
        return env  # the stamp check: the whole cost when nothing changed
    try:
        hub_home().mkdir(parents=True, exist_ok=True)
        if os.geteuid() == 0:
            hub_home().chmod(0o755)
    except OSError as error:
        raise HubUnavailable(f"cannot create {hub_home()}: {error}") from None
    with _locked(env, fcntl.LOCK_EX):
        stamp = env.installed()  # another process may have finished it while we waited
        started = time.monotonic()
        if stamp.get("dependencies") != env.root.name:
            npm, python = _tools()
            if say:
                say(f"building the hub's environment in {env.root} (a few minutes, once)...")
            _build(env, repo, npm, python)
        elif stamp.get("course") != wanted:
            _install_course(env, repo, with_dependencies=False)
            world_readable(env.root / "venv")
        else:
            return env
        stamp = {"dependencies": env.root.name, "course": wanted, **_versions(env),
                 "seconds": round(time.monotonic() - started, 1)}
        env.stamp.write_text(json.dumps(stamp, indent=1) + "\n")
        env.stamp.chmod(0o644)
    _prune(keep=env)
    return env


def _prune(keep: HubEnv, unused_days: float = 14) -> None:
    """Remove other hub environments (older pins) nobody has used for ``unused_days``
    and nobody holds now (each is about 0.7 GB)."""
    cutoff = time.time() - unused_days * 86400
    for other in hub_home().glob("hub-*"):
        env = HubEnv(other)
        if other == keep.root or not other.is_dir():
            continue
        with contextlib.suppress(OSError):
            if env.stamp.exists() and env.stamp.stat().st_mtime > cutoff:
                continue
            with open(other.parent / f".{other.name}.lock", "a") as handle:
                try:
                    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    continue  # being built or used right now
                shutil.rmtree(other, ignore_errors=True)


# ---------------------------------------------------------------------------- CLI
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m course.term.hub",
                                     description="The class hub's environment.")
    parser.add_argument("action", choices=["ensure", "where"])
    args = parser.parse_args(argv)

    def say(line: str) -> None:
        print(f"hub-deps: {line}", file=sys.stderr, flush=True)

    try:
        before = location().installed()
        env = ensure(say=say)
    except HubUnavailable as error:
        say(f"{error}; the JupyterHub tests skip (and fail in CI) until it can be installed.")
        return 0 if args.action == "ensure" else 2
    if args.action == "where":
        print(f"JUPYTERHUB={env.jupyterhub}\nCOURSE_HUB_PROXY={env.proxy}\n"
              f"COURSE_HUB_CONFIG={env.config}\nNBGRADER={env.bin / 'nbgrader'}")
    elif env.installed() != before:
        stamp = env.installed()
        say(f"ready in {env.root}: jupyterhub {stamp['jupyterhub']}, nbgrader "
            f"{stamp['nbgrader']}, configurable-http-proxy {stamp['configurable-http-proxy']} "
            f"({stamp['seconds']:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
