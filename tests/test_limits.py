"""What one graded notebook may take from the grading machine (course/sandbox/limits.py),
piece by piece, in real processes: the resource limits a kernel sets on itself, the
output cap of its print, the watch on its folders and process group, the words a
student's row gets. The class test (tests/test_class_grading.py) grades a memory bomb,
a fork bomb, an output flood and a disk filler beside honest students; make check's
path is tested here on week 1."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from weeks import REPO

from course.sandbox.limits import (
    GIB,
    MIB,
    KernelWatch,
    Limits,
    breach_of,
    parse_size,
    tasks_in_group,
)


def test_sizes_read_as_people_write_them_and_a_bad_one_is_named(monkeypatch):
    assert parse_size("2G") == parse_size("2GiB") == 2 * GIB
    assert parse_size("512m") == 512 * MIB and parse_size("300") == 300
    monkeypatch.setenv("COURSE_LIMIT_MEMORY", "4G")
    monkeypatch.setenv("COURSE_LIMIT_PROCESSES", "64")
    limits = Limits.current(budget_s=120)
    assert (limits.memory, limits.processes, limits.cpu_s) == (4 * GIB, 64, 150)
    assert Limits.current().cpu_s == 0  # no budget, no CPU limit
    monkeypatch.setenv("COURSE_LIMIT_DISK", "lots")
    with pytest.raises(ValueError, match="COURSE_LIMIT_DISK='lots' is not a size"):
        Limits.current()


def _in_a_kernel_like_process(code: str, limits: Limits) -> subprocess.CompletedProcess:
    """``code`` in a fresh interpreter that first applies ``limits`` as a kernel does."""
    prelude = ("import json, sys\nfrom course.sandbox.limits import apply\n"
               f"apply(json.loads({json.dumps(json.dumps(limits.plan()))}))\n")
    return subprocess.run([sys.executable, "-c", prelude + code], capture_output=True,
                          text=True, timeout=60, cwd=REPO)


def test_a_kernel_past_its_memory_gets_a_memory_error_and_lives_on():
    done = _in_a_kernel_like_process(
        "try:\n    bytearray(8 * 2**30)\nexcept MemoryError:\n    print('MemoryError')\n"
        "print(len(bytearray(10 * 2**20)))", Limits(memory=1 * GIB))
    assert done.stdout.split() == ["MemoryError", str(10 * MIB)], done.stderr


def test_a_file_past_the_disk_limit_is_refused(tmp_path):
    done = _in_a_kernel_like_process(
        f"f = open({str(tmp_path / 'big')!r}, 'wb')\nf.write(b'x' * (2 * 2**20))\n"
        "try:\n    f.write(b'x' * (2 * 2**20)); f.flush()\nexcept OSError as e:\n"
        "    print(e.errno)", Limits(disk=3 * MIB))
    assert done.stdout.split() == ["27"], done.stderr  # EFBIG: File too large
    assert (tmp_path / "big").stat().st_size <= 3 * MIB


def test_the_watch_stops_a_kernel_whose_folder_grows_past_the_disk_limit(tmp_path):
    stopped = []
    watch = KernelWatch([tmp_path], Limits(disk=4 * MIB, processes=0), lambda: None,
                        stopped.append)
    for i in range(3):  # each file below the limit, the folder above it
        (tmp_path / f"part-{i}").write_bytes(os.urandom(2 * MIB))
    deadline = time.monotonic() + 10
    while not stopped and time.monotonic() < deadline:
        time.sleep(0.05)
    assert watch.close().startswith("wrote past the disk limit (4 MiB) in its scratch folder")
    assert stopped == [watch.reason]


def test_the_watch_counts_a_process_groups_tasks_and_stops_it_at_the_limit():
    """A process group of 12 sleepers, watched with a limit of 8 tasks: stopped once."""
    group = subprocess.Popen([sys.executable, "-c", (
        "import os, time\nfor _ in range(11):\n    if os.fork() == 0:\n"
        "        time.sleep(60); os._exit(0)\ntime.sleep(60)")], start_new_session=True)
    try:
        deadline = time.monotonic() + 10
        while tasks_in_group(group.pid) < 12 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert tasks_in_group(group.pid) == 12

        def stop(reason):
            os.killpg(group.pid, signal.SIGKILL)

        watch = KernelWatch([], Limits(processes=8, disk=0), lambda: group.pid, stop)
        group.wait(timeout=10)
        assert watch.close() == "hit the process limit (8 tasks); 12 were running: its " \
                                "kernel was stopped"
    finally:
        if group.poll() is None:
            os.killpg(group.pid, signal.SIGKILL)
            group.wait()


def test_each_breach_is_named_in_the_students_words():
    limits = Limits()
    assert breach_of("MemoryError", "", limits) == "went past the memory limit (2 GiB)"
    assert breach_of("BlockingIOError", "[Errno 11] Resource temporarily unavailable",
                     limits).startswith("hit the process limit (256 tasks)")
    assert breach_of("OSError", "[Errno 27] File too large", limits) == \
        "wrote past the disk limit (512 MiB)"
    assert breach_of("OutputLimitExceeded", "", limits).startswith(
        "printed past the output limit (20 MiB)")
    assert breach_of("BlockingIOError", "[Errno 11] a socket would block", limits) is None
    assert breach_of("ValueError", "no", limits) is None


@pytest.fixture(scope="module")
def week1_solved(tmp_path_factory) -> Path:
    """Week 1's release with every answer cell taken from the solution."""
    import nbformat

    from course.grader.declaration import load

    week = load(1)
    solution = nbformat.read(week.notebook, as_version=4)
    answers = {c.metadata["nbgrader"]["grade_id"]: c.source for c in solution.cells
               if c.metadata.get("nbgrader", {}).get("solution") and c.cell_type == "code"}
    release = nbformat.read(REPO / "week1" / "week1.ipynb", as_version=4)
    for cell in release.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in answers:
            cell.source = "\n".join(line for line in answers[grade_id].splitlines()
                                    if "### BEGIN SOLUTION" not in line
                                    and "### END SOLUTION" not in line)
    folder = tmp_path_factory.mktemp("week1")
    nbformat.write(release, folder / "week1.ipynb")
    return folder


FORK_BOMB = "import os\nwhile True:\n    os.fork()\n"


@pytest.mark.parametrize(("cell", "says", "full", "sandbox"), [
    ("_hog = bytearray(30 * 2**30)\n", "note: went past the memory limit (2 GiB)", True, "off"),
    ("while True:\n    print('x' * 1_000_000)\n",
     "note: printed past the output limit (20 MiB)", True, "off"),
    # without the sandbox: RLIMIT_NPROC over the account (root is exempt) and the watch
    (FORK_BOMB, "note: hit the process limit (256 tasks)", False, "off"),
    (FORK_BOMB, "note: hit the process limit (256 tasks)", False, "on"),  # a uid or userns
], ids=["memory", "output", "fork-bomb", "fork-bomb-sandboxed"])
def test_make_check_holds_a_learners_runaway_cell_to_the_same_limits(week1_solved, tmp_path,
                                                                     cell, says, full, sandbox):
    """The learner hears what the instructor would: the limit, and only that cell lost
    (a fork bomb's kernel is stopped, so nothing of it scores). Run as root and, in
    ``make test-all``, as a normal account too (tests/test_as_a_student.py)."""
    import nbformat

    from course.sandbox.jail import availability

    if sandbox == "on" and availability():
        pytest.skip(f"no sandbox here: {availability()}")
    nb = nbformat.read(week1_solved / "week1.ipynb", as_version=4)
    nb.cells.insert(1, nbformat.v4.new_code_cell(cell))
    nbformat.write(nb, tmp_path / "week1.ipynb")
    env = {**os.environ, "PYTHONPATH": f"{REPO}:{os.environ.get('PYTHONPATH', '')}",
           "COURSE_GRADING_SANDBOX": sandbox}
    done = subprocess.run([sys.executable, "-m", "course.grader", "--week", "1",
                           "--submission", str(tmp_path)], capture_output=True, text=True,
                          timeout=300, env=env, cwd=REPO)
    assert done.returncode == 0, done.stderr[-3000:]
    assert says in done.stdout, done.stdout[-3000:]
    last = done.stdout.strip().splitlines()[-1]
    earned, total = last.split(": ")[1].split("/")
    assert (earned == total) == full, last
