"""course.base.fork keeps its promises, on Linux and as on macOS; nothing else in course forks.

Every property runs twice: once as the platform is, once with ``os.waitid`` and
``os.pidfd_open`` hidden, as macOS (before Python 3.13) has neither.
"""

from __future__ import annotations

import ast
import os
import select
import signal
import subprocess
import time
from pathlib import Path

import pytest

import course
from course.base import fork

PACKAGE = Path(course.__file__).parent
FORKS = {"fork", "forkpty", "waitpid", "waitid", "wait", "wait3", "wait4", "pidfd_open"}


@pytest.fixture(params=["as-is", "as-on-macos"])
def platform(request, monkeypatch) -> str:
    if request.param == "as-on-macos":
        monkeypatch.delattr(os, "waitid", raising=False)
        monkeypatch.delattr(os, "pidfd_open", raising=False)
    return request.param


def soon(seconds: float) -> float:
    return time.monotonic() + seconds


def test_the_exit_code_is_what_the_body_returned(platform):
    assert str(fork.start(lambda: 7).wait()) == "exit 7"
    ended = fork.start(lambda: None).wait()
    assert (ended.code, ended.signal, str(ended)) == (0, None, "exit 0")
    assert fork.start(lambda: "not a code").wait().code == 0


def test_a_body_that_raises_exits_1_with_its_traceback_on_stderr(platform, capfd):
    def body() -> None:
        raise ValueError("the body failed")

    ended = fork.start(body).wait()
    assert (ended.code, ended.killed) == (1, False)
    assert "ValueError: the body failed" in capfd.readouterr().err


def test_a_child_that_is_sigkilled_says_so(platform):
    ended = fork.start(lambda: os.kill(os.getpid(), signal.SIGKILL)).wait()
    assert (ended.signal, ended.code, ended.killed, str(ended)) == (
        "SIGKILL", None, True, "SIGKILL")
    assert os.WIFSIGNALED(ended.status)


def test_poll_does_not_block_and_a_deadline_leaves_the_child_running(platform):
    child = fork.start(lambda: time.sleep(30))
    try:
        began = time.monotonic()
        assert child.poll() is None
        assert not child.exited()
        assert time.monotonic() - began < 0.5
        assert child.wait(soon(0.1)) is None  # the deadline came first
        assert child.poll() is None  # and the child was left running
    finally:
        ended = child.kill()
    assert ended.killed
    assert child.poll() is ended and child.exited()


def test_a_child_that_ended_is_not_signalled_again(platform):
    child = fork.start(lambda: 3)
    assert not child.outlives(soon(10))  # it ends well before the deadline
    assert child.exited()
    assert str(child.kill()) == "exit 3"  # its own ending, not the kill's


def _spawn_grandchild(write: int) -> None:
    """A body that starts a ``sleep`` holding ``write`` open, says its pid, and sleeps."""
    sleeper = subprocess.Popen(["sleep", "30"], pass_fds=[write])
    os.write(write, f"{sleeper.pid}\n".encode())
    time.sleep(30)


def _closed_within(read: int, seconds: float) -> bool:
    """Whether every holder of the pipe's write end is gone within ``seconds``."""
    deadline = soon(seconds)
    while (left := deadline - time.monotonic()) > 0:
        if select.select([read], [], [], left)[0] and not os.read(read, 64):
            return True
    return False


@pytest.mark.parametrize("own_group", [True, False])
def test_killing_a_group_leader_kills_what_it_started(platform, own_group):
    read, write = os.pipe()
    child = fork.start(lambda: _spawn_grandchild(write), own_group=own_group)
    os.close(write)
    try:
        assert select.select([read], [], [], 10)[0], "the grandchild never started"
        grandchild = int(os.read(read, 64).split(b"\n")[0])
        assert child.wait(soon(0.2)) is None
        assert child.kill().killed
        # the pipe closes once the grandchild is dead too; without a group it lives on
        assert _closed_within(read, 5 if own_group else 0.3) is own_group
    finally:
        if not own_group:
            os.kill(grandchild, signal.SIGKILL)
        os.close(read)


def test_stop_and_continue(platform):
    read, write = os.pipe()

    def body() -> int:
        return 5 if os.read(read, 1) == b"x" else 9

    child = fork.start(body)
    try:
        child.stop()
        assert child.wait_stopped(soon(10))
        os.write(write, b"x")
        assert child.outlives(soon(0.3))  # stopped: it cannot read and finish
        child.cont()
        assert str(child.wait(soon(10))) == "exit 5"
    finally:
        child.kill()
        os.close(read)
        os.close(write)


def test_wait_stopped_reports_a_child_that_ended_instead(platform):
    child = fork.start(lambda: 4)
    assert not child.wait_stopped(soon(10))
    assert child.ended is not None and child.ended.code == 4


def test_what_arrives_on_a_watched_pipe_can_move_the_deadline(platform):
    read, write = os.pipe()

    def body() -> None:
        os.write(write, b"moving on\n")
        time.sleep(0.5)

    child = fork.start(body)
    heard: list[bytes] = []

    def on_read(chunk: bytes) -> float | None:
        heard.append(chunk)
        return soon(10)

    try:
        # without the move, a 0.2 s deadline would find it still running
        assert not child.outlives(soon(0.2), fd=read, on_read=on_read)
        assert heard == [b"moving on\n"]
        assert child.wait().code == 0
    finally:
        child.kill()
        os.close(read)
        os.close(write)


# -------------------------------------------------- one place forks
def forks_outside(root: Path) -> list[str]:
    """``file:line`` of every fork or wait of ``os`` in ``root`` except ``base/fork.py``."""
    found = []
    for path in sorted(root.rglob("*.py")):
        if path.relative_to(root).as_posix() == "base/fork.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            called = (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                      and node.value.id == "os" and node.attr in FORKS)
            imported = (isinstance(node, ast.ImportFrom) and node.module == "os"
                        and any(alias.name in FORKS for alias in node.names))
            if called or imported:
                found.append(f"{path.relative_to(root)}:{node.lineno}")
    return found


def test_only_course_base_fork_forks_or_waits():
    assert forks_outside(PACKAGE) == []


def test_the_scan_finds_a_fork_elsewhere(tmp_path):
    (tmp_path / "base").mkdir()
    (tmp_path / "base" / "fork.py").write_text("import os\nos.fork()\n")
    (tmp_path / "crash.py").write_text("import os\n\npid = os.fork()\nos.waitpid(pid, 0)\n")
    (tmp_path / "other.py").write_text("from os import waitpid\n")
    assert forks_outside(tmp_path) == ["crash.py:3", "crash.py:4", "other.py:1"]
