"""course.base.npm: the locked tree installed with npm ci, one line when it fails, and
opened to every account (with a stand-in npm: these tests need no network)."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from course.base.npm import PIN_FILES, npm_ci, world_readable


class Failed(RuntimeError):
    pass


def _npm(tmp_path: Path, body: str) -> str:
    program = tmp_path / "npm"
    program.write_text("#!/bin/sh\n" + body)
    program.chmod(0o755)
    return str(program)


def _pins(tmp_path: Path) -> Path:
    pins = tmp_path / "pins"
    pins.mkdir()
    for name in PIN_FILES:
        (pins / name).write_text("{}\n")
    return pins


def test_npm_ci_runs_in_the_folder_with_the_pins_copied(tmp_path):
    into = tmp_path / "into"
    into.mkdir()
    npm = _npm(tmp_path, 'echo "$@" > args; ls package.json package-lock.json > seen\n')
    npm_ci(npm, _pins(tmp_path), into, "thing", Failed)
    assert (into / "args").read_text().split()[:2] == ["ci", "--omit=dev"]
    assert (into / "seen").read_text().split() == ["package-lock.json", "package.json"]


def test_a_failed_npm_ci_is_one_line_with_npms_last_words(tmp_path):
    into = tmp_path / "into"
    into.mkdir()
    npm, pins = _npm(tmp_path, 'echo "npm ERR! code E404" >&2; echo "npm ERR! 404 Not Found" >&2\n'
                               "exit 1\n"), _pins(tmp_path)
    with pytest.raises(Failed, match=r"^npm ci of thing failed: npm ERR! 404 Not Found$"):
        npm_ci(npm, pins, into, "thing", Failed)
    with pytest.raises(Failed, match=r"^npm ci of thing failed: "):
        npm_ci(str(tmp_path / "no-such-npm"), pins, into, "thing", Failed)


def test_world_readable_opens_the_tree_and_leaves_links_alone(tmp_path):
    top = tmp_path / "top"
    (top / "bin").mkdir(parents=True)
    program, data = top / "bin" / "tool", top / "data.json"
    program.write_text("#!/bin/sh\n")
    data.write_text("{}")
    program.chmod(0o700)
    data.chmod(0o600)
    outside = tmp_path / "private"
    outside.write_text("secret")
    outside.chmod(0o600)
    (top / "link").symlink_to(outside)
    for folder in (top / "bin", top):
        folder.chmod(0o700)
    world_readable(top)
    assert stat.S_IMODE(program.stat().st_mode) == 0o755
    assert stat.S_IMODE(data.stat().st_mode) == 0o644
    assert stat.S_IMODE(top.stat().st_mode) == 0o755
    assert stat.S_IMODE(outside.stat().st_mode) == 0o600  # a link is not followed
