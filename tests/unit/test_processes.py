"""How many cores the daemon's worker processes may count on: the affinity, no more than
the control group's CPU quota (a container's ``--cpus``), for cgroup v2 and v1."""

from __future__ import annotations

import os
from pathlib import Path

from contextls.common.processes import cpu_quota, usable_cores


def cgroup(root: Path, own: str, files: dict[str, str]) -> tuple[Path, Path]:
    """A control-group tree under ``root`` and a ``/proc/self/cgroup`` saying ``own``."""
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    root.mkdir(parents=True, exist_ok=True)
    (root / "self-cgroup").write_text(own)
    return root / "fs", root / "self-cgroup"


def test_a_v2_quota_is_its_quota_over_its_period(tmp_path: Path) -> None:
    fs, own = cgroup(
        tmp_path, "0::/user.slice/editor\n", {"fs/user.slice/editor/cpu.max": "150000 100000\n"}
    )
    assert cpu_quota(fs, own) == 1.5
    assert usable_cores(fs, own) == min(2, len(os.sched_getaffinity(0)))  # 1.5 CPUs: two run


def test_a_container_s_own_v2_group_is_the_root_of_its_tree(tmp_path: Path) -> None:
    fs, own = cgroup(tmp_path, "0::/\n", {"fs/cpu.max": "100000 100000\n"})
    assert cpu_quota(fs, own) == 1.0 and usable_cores(fs, own) == 1


def test_no_quota_leaves_the_affinity(tmp_path: Path) -> None:
    fs, own = cgroup(tmp_path, "0::/a\n", {"fs/a/cpu.max": "max 100000\n"})
    assert cpu_quota(fs, own) is None
    assert usable_cores(fs, own) == len(os.sched_getaffinity(0))
    fs, own = cgroup(tmp_path / "none", "0::/b\n", {})  # no controller file at all
    assert cpu_quota(fs, own) is None


def test_a_v1_quota_is_read_from_the_cpu_controller_s_tree(tmp_path: Path) -> None:
    fs, own = cgroup(
        tmp_path,
        "4:memory:/docker/abc\n2:cpu,cpuacct:/docker/abc\n0::/\n",
        {
            "fs/cpu/docker/abc/cpu.cfs_quota_us": "300000\n",
            "fs/cpu/docker/abc/cpu.cfs_period_us": "100000\n",
        },
    )
    assert cpu_quota(fs, own) == 3.0
    unlimited, own = cgroup(
        tmp_path / "v1",
        "2:cpu,cpuacct:/\n",
        {"fs/cpu/cpu.cfs_quota_us": "-1\n", "fs/cpu/cpu.cfs_period_us": "100000\n"},
    )
    assert cpu_quota(unlimited, own) is None


def test_this_machine_says_a_positive_count() -> None:
    assert 1 <= usable_cores() <= (os.cpu_count() or 1)
