"""``make lock``: re-resolve every dependency and rewrite ``constraints.txt``, as a student would.

The resolve runs as an unprivileged account (you, or as root the course's
``crashcourse-pg``; :mod:`course.host.accounts`) with a bare environment, in a
fresh copy of the repository, using ``pip install --dry-run --report``. Root's pip
on some machines sees packages (or versions) a normal user's pip cannot; a lock made
as root once pinned one, and ``make setup`` failed for every student. Resolving as
the student makes that impossible by construction.

Usage: ``python scripts/lock.py [--extras postgres,agents,browser,hub,site]
[--out constraints.txt]``
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from course.host.accounts import (  # noqa: E402 - after the path set-up above
    current_or_unprivileged,
    fresh_copy_for,
    python_for,
    run_bare,
)

PROJECT = "crash-resume-course"
# Releases held back so that every platform of the README's "Where it runs" has a wheel
# (tests/test_platforms.py resolves the pins for each): the newer ones dropped Intel Macs.
HELD_BACK = {"argon2-cffi-bindings": "<26",  # 26.x: macOS arm64 only
             "cryptography": "<49"}  # 49 and 50: macOS arm64 only
NOT_PINNED = {PROJECT, "pip", "setuptools", "wheel"}  # as `pip freeze` leaves them out


def pinned_pip(constraints: Path) -> str | None:
    """The pip version ``constraints`` pins (kept by a new lock: edit it to move pip)."""
    for line in constraints.read_text().splitlines() if constraints.exists() else []:
        if line.startswith("pip=="):
            return line.removeprefix("pip==").strip()
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="make lock", description=__doc__.splitlines()[0])
    parser.add_argument("--extras", default="postgres,agents,browser,hub,site")
    parser.add_argument("--out", type=Path, default=REPO / "constraints.txt")
    args = parser.parse_args(argv)

    account = current_or_unprivileged()
    home, clone = fresh_copy_for(account, REPO, "course-lock-")
    try:
        python = python_for(account, home)
        if python is None:
            print(f"make lock: no Python {sys.version_info.major}.{sys.version_info.minor} "
                  f"that {account.pw_name} can run", file=sys.stderr)
            return 2
        print(f"resolving '.[{args.extras}]' as {account.pw_name} with {python} ...", flush=True)
        venv = home / "venv"
        pip = pinned_pip(clone / "constraints.txt")
        steps = [[python, "-m", "venv", str(venv)],
                 *([[str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet",
                     "--disable-pip-version-check", f"pip=={pip}"]] if pip else []),
                 [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet",
                  "--disable-pip-version-check", "--dry-run", "--ignore-installed",
                  "--report", str(home / "report.json"), "-c", str(home / "held-back.txt"),
                  f".[{args.extras}]"]]
        (home / "held-back.txt").write_text(
            "".join(f"{name}{spec}\n" for name, spec in HELD_BACK.items()))
        os.chown(home / "held-back.txt", account.pw_uid, account.pw_gid)
        for step in steps:
            done = run_bare(account, step, cwd=clone, home=home, timeout=1800)
            if done.returncode != 0:
                print(f"make lock: {' '.join(step[:4])} failed:\n{done.stderr[-3000:]}",
                      file=sys.stderr)
                return 2
        report = json.loads((home / "report.json").read_text())
        pins = sorted(
            (item["metadata"]["name"], item["metadata"]["version"]) for item in report["install"]
            if item["metadata"]["name"].lower() not in NOT_PINNED)
        pins += [("pip", pip)] if pip else []
        version = f"{sys.version_info.major}.{sys.version_info.minor}"
        lines = [f"# Pinned from a real resolve of '.[{args.extras}]' on Python {version},",
                 "# made by `make lock` as an unprivileged user (scripts/lock.py).",
                 "# make setup installs with -c constraints.txt.",
                 "# pip itself is pinned too: make setup upgrades the venv's pip to it first.",
                 "# Held back for Intel Macs' wheels (scripts/lock.py): "
                 + ", ".join(f"{name}{spec}" for name, spec in HELD_BACK.items()) + ".",
                 *(f"{name}=={version}" for name, version in
                   sorted(pins, key=lambda p: p[0].lower()))]
        args.out.write_text("\n".join(lines) + "\n")
        print(f"wrote {len(pins)} pins to {args.out}")
        return 0
    finally:
        shutil.rmtree(home.parent, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
