"""Which ``claude`` program week 7 runs: the real Claude Code CLI, pinned, or the stand-in.

The real CLI comes from npm, pinned by ``scripts/claude/package.json`` and its
``package-lock.json`` (:data:`PIN`), and is installed by ``make claude-cli``
(``python -m course.travel.cli ensure``) with ``npm ci`` into a folder every account can
read: ``/var/lib/crashcourse/claude-<version>-<lock hash>`` as root,
``~/.cache/crashcourse/...`` otherwise (``COURSE_CLAUDE_HOME`` replaces the parent folder).
It is about 400 MB (a native binary), so ``make setup`` does not fetch it; ``make
test-all`` does. The folder's ``installed.json`` is written last: a half-built folder
is never used.

:func:`find` answers which program runs, first match wins:

1. ``COURSE_CLAUDE_CLI``: a path to a ``claude`` program, or ``stand-in``;
2. the pinned npm install above, once ``make claude-cli`` built it;
3. the CLI the ``claude-agent-sdk`` wheel bundles, when it is the pinned version (the
   wheel's ``_bundled/claude`` is the same native binary npm installs: same version,
   same bytes);
4. else the course's stand-in, :mod:`course.travel.fake_claude`, with one line saying
   why (:attr:`Cli.note`).

``python -m course.travel.cli where`` prints which one and its version.
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
import time
from dataclasses import dataclass
from pathlib import Path

from course.base.npm import npm_ci, world_readable
from course.host.accounts import machine_cache

REPO = Path(__file__).resolve().parents[2]
PACKAGE = "@anthropic-ai/claude-code"
PIN = "2.1.332"
PIN_FILES = Path("scripts") / "claude"
STAND_IN = "stand-in"
HOW_TO_GET = "make claude-cli"


class CliUnavailable(RuntimeError):
    """The pinned CLI cannot be installed here; the message is one sentence saying why."""


@dataclass(frozen=True)
class Cli:
    """The ``claude`` program a session runs: ``real`` or the course's stand-in."""

    path: Path | None        # the program (None for the stand-in: written per desk)
    version: str             # what ``claude --version`` printed
    source: str              # where it came from, in a few words
    real: bool
    note: str = ""           # for the stand-in: why the real CLI is not used

    @property
    def label(self) -> str:
        if self.real:
            return f"real Claude Code CLI {self.version} ({self.source})"
        return f"the course's stand-in claude ({self.version})"


# ---------------------------------------------------------------------------- where
def home() -> Path:
    if os.environ.get("COURSE_CLAUDE_HOME"):
        return Path(os.environ["COURSE_CLAUDE_HOME"])
    return machine_cache()


def lock_hash(repo: Path = REPO) -> str:
    digest = hashlib.sha256()
    for name in ("package.json", "package-lock.json"):
        digest.update(name.encode() + b"\0" + (Path(repo) / PIN_FILES / name).read_bytes())
    return digest.hexdigest()[:8]


def install_root(repo: Path = REPO) -> Path:
    return home() / f"claude-{PIN}-{lock_hash(repo)}"


def _binary(root: Path) -> Path:
    return root / "node_modules" / "@anthropic-ai" / "claude-code" / "bin" / "claude.exe"


def bundled() -> Path | None:
    """The CLI inside the installed ``claude-agent-sdk`` wheel, if it is the pinned one."""
    try:
        import claude_agent_sdk
        from claude_agent_sdk._cli_version import __cli_version__
    except ImportError:
        return None
    path = Path(claude_agent_sdk.__file__).parent / "_bundled" / "claude"
    return path if __cli_version__ == PIN and os.access(path, os.X_OK) else None


def stand_in_version() -> str:
    from course.travel.fake_claude import VERSION

    return VERSION


def find(repo: Path = REPO) -> Cli:
    """The ``claude`` program week 7 runs (see the module docstring for the order)."""
    wanted = os.environ.get("COURSE_CLAUDE_CLI", "").strip()
    if wanted == STAND_IN:
        return Cli(None, stand_in_version(), "COURSE_CLAUDE_CLI=stand-in", False,
                   "COURSE_CLAUDE_CLI=stand-in chose the course's stand-in")
    if wanted:
        return Cli(Path(wanted), version_of(Path(wanted)), "COURSE_CLAUDE_CLI", True)
    with contextlib.suppress(OSError):
        root = install_root(repo)
        stamp = _stamp(root)
        if stamp.get("version") and _binary(root).exists():
            return Cli(_binary(root), stamp["version"].split(" ", 1)[0],
                       f"npm {PACKAGE}@{PIN}, {root}", True)
    sdk = bundled()
    if sdk is not None:
        return Cli(sdk, PIN, "bundled in the claude-agent-sdk wheel", True)
    return Cli(None, stand_in_version(), "course/travel/fake_claude.py", False,
               f"the real Claude Code CLI is not installed here ({HOW_TO_GET} installs "
               f"{PACKAGE}@{PIN} with npm, about 400 MB): the course's stand-in runs instead")


def version_of(program: Path) -> str:
    try:
        done = subprocess.run([str(program), "--version"], capture_output=True, text=True,
                              timeout=60)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise CliUnavailable(f"{program} does not run: {error}") from None
    if done.returncode:
        raise CliUnavailable(f"{program} --version failed: {done.stderr.strip()[-200:]}")
    return done.stdout.strip().split(" ", 1)[0]  # "2.1.332 (Claude Code)" -> "2.1.332"


def _stamp(root: Path) -> dict:
    try:
        return json.loads((root / "installed.json").read_text())
    except (OSError, ValueError):
        return {}


# ------------------------------------------------------------------------- install
def ensure(repo: Path = REPO, say=None) -> Path:
    """The pinned CLI, installed with ``npm ci`` when it is not yet; its program's path.

    :class:`CliUnavailable` says in one sentence why it cannot be installed."""
    root = install_root(repo)
    if _stamp(root).get("version") and _binary(root).exists():
        return _binary(root)
    npm = shutil.which("npm")
    if npm is None:
        raise CliUnavailable(f"npm is not installed ({PACKAGE} installs with npm; install "
                             "Node.js 20+)")
    try:
        home().mkdir(parents=True, exist_ok=True)
        if os.geteuid() == 0:
            home().chmod(0o755)
    except OSError as error:
        raise CliUnavailable(f"cannot create {home()}: {error}") from None
    with open(home() / f".{root.name}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _stamp(root).get("version") and _binary(root).exists():
            return _binary(root)  # another process built it while we waited
        if say:
            say(f"installing {PACKAGE}@{PIN} with npm ci into {root} (about 400 MB, once)...")
        started = time.monotonic()
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir(parents=True)
        try:
            npm_ci(npm, Path(repo) / PIN_FILES, root, f"{PACKAGE}@{PIN}", CliUnavailable)
            version = version_of(_binary(root))
            if version != PIN:
                raise CliUnavailable(f"npm ci installed {version!r}, not {PIN}")
            world_readable(root)
            stamp = {"package": PACKAGE, "version": version,
                     "seconds": round(time.monotonic() - started, 1)}
            (root / "installed.json").write_text(json.dumps(stamp, indent=1) + "\n")
            (root / "installed.json").chmod(0o644)
        except BaseException:
            shutil.rmtree(root, ignore_errors=True)
            raise
    return _binary(root)


# ---------------------------------------------------------------------------- CLI
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m course.travel.cli",
                                     description="The Claude Code CLI week 7 runs.")
    parser.add_argument("action", choices=["ensure", "where"])
    args = parser.parse_args(argv)

    def say(line: str) -> None:
        print(f"claude-cli: {line}", file=sys.stderr, flush=True)

    if args.action == "ensure":
        before = _stamp(install_root())
        try:
            path = ensure(say=say)
        except CliUnavailable as error:
            say(f"{error}; week 7 runs the course's stand-in and the real-CLI tests skip "
                "(and fail in CI).")
            return 0
        if not before:
            say(f"ready: {path} ({_stamp(install_root()).get('version')})")
        return 0
    cli = find()
    print(f"{cli.label}\n{cli.path or cli.source}")
    if cli.note:
        print(cli.note)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
