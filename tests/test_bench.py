"""The benchmarks' own checks: side-by-side outcomes must match, filesystems are named,
and a failed benchmark makes ``python -m bench`` exit non-zero. (Speeds are never asserted.)"""

from __future__ import annotations

import types

import pytest

import bench.__main__ as bench_main
from bench.common import disk_dir, filesystem_of
from bench.fork_vs_fresh import LedgersDiffer, check_same_ledgers

ONE_EACH = (("inv_9", 1, 0, 1, 0),)
TWO_CHARGES = (("inv_9", 2, 0, 1, 0),)


def test_fork_vs_fresh_fails_when_the_two_sides_end_differently():
    assert check_same_ledgers([ONE_EACH] * 2, [ONE_EACH] * 3) == ONE_EACH
    with pytest.raises(LedgersDiffer, match="different ledgers"):
        check_same_ledgers([ONE_EACH, ONE_EACH], [ONE_EACH, TWO_CHARGES])
    with pytest.raises(LedgersDiffer):
        check_same_ledgers([TWO_CHARGES], [ONE_EACH])
    with pytest.raises(LedgersDiffer):
        check_same_ledgers([], [ONE_EACH])


MOUNTS = """\
/dev/vda / ext4 rw,relatime 0 0
tmpfs /dev/shm tmpfs rw,nosuid,nodev 0 0
tmpfs /tmp tmpfs rw 0 0
/dev/vdb /tmp/disk xfs rw 0 0
"""


def test_filesystem_of_takes_the_innermost_mount():
    assert filesystem_of("/dev/shm/fuzz", MOUNTS) == "tmpfs"
    assert filesystem_of("/tmp/x", MOUNTS) == "tmpfs"
    assert filesystem_of("/tmp/disk/runs", MOUNTS) == "xfs"
    assert filesystem_of("/tmpfoo", MOUNTS) == "ext4"  # a prefix of the name is not a mount
    assert filesystem_of("/home/me", MOUNTS) == "ext4"


def test_disk_dir_never_picks_a_folder_in_ram(tmp_path, monkeypatch):
    import bench.common as common

    monkeypatch.setattr(common, "in_ram", lambda path: "ram" in str(path))
    (tmp_path / "ram").mkdir()
    (tmp_path / "disk").mkdir()
    assert disk_dir([tmp_path / "ram", tmp_path / "disk"]) == tmp_path / "disk"
    assert disk_dir([tmp_path / "ram"]) is None


def test_a_failed_benchmark_makes_bench_exit_non_zero(monkeypatch, tmp_path, capsys):
    def broken(quick: bool = False):
        raise LedgersDiffer("the two sides ended with different ledgers")

    monkeypatch.setattr(bench_main, "BENCHMARKS", ("broken",))
    monkeypatch.setattr(bench_main.importlib, "import_module",
                        lambda name: types.SimpleNamespace(run=broken, TITLE="broken"))
    monkeypatch.setattr(bench_main, "write", lambda *args: None)
    assert bench_main.main(["--out", str(tmp_path)]) == 1
    captured = capsys.readouterr()
    assert "FAILED: LedgersDiffer" in captured.out
    assert "bench: FAILED: broken" in captured.err
