"""The memory a computation may use (:func:`mpdp.protocols.numerics.cost.memory_limit`): ``MemAvailable``, a
cgroup's limit where lower, at most ``MEMORY_FRACTION`` of the physical memory; refusals name it."""

from __future__ import annotations

from pathlib import Path

import pytest

from mpdp.protocols.errors import CostLimitError
from mpdp.protocols.numerics import cost
from mpdp.protocols.numerics.cost import CostEstimate, available_memory, memory_limit, physical_memory

GB = 10**9


def _proc(tmp_path: Path, available_kb: int | None, cgroup: str) -> Path:
    proc = tmp_path / "proc"
    (proc / "self").mkdir(parents=True)
    lines = ["MemTotal:       24683568 kB", "MemFree:        15794300 kB"]
    if available_kb is not None:
        lines.append(f"MemAvailable:   {available_kb} kB")
    (proc / "meminfo").write_text("\n".join(lines) + "\n")
    (proc / "self" / "cgroup").write_text(cgroup)
    return proc


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_mem_available_is_read_in_kibibytes(tmp_path: Path) -> None:
    proc = _proc(tmp_path, 11_718_750, "0::/\n")  # 11,718,750 KiB = 12.0e9 bytes
    assert available_memory(proc, tmp_path / "none") == min(12_000_000_000, physical_memory())


def test_a_lower_cgroup_v2_limit_of_an_ancestor_wins(tmp_path: Path) -> None:
    proc = _proc(tmp_path, 11_718_750, "0::/lane/job\n")
    cgroups = tmp_path / "cgroup"
    _write(cgroups / "lane" / "memory.max", f"{3 * GB}\n")
    _write(cgroups / "lane" / "job" / "memory.max", "max\n")  # no limit of its own
    assert available_memory(proc, cgroups) == 3 * GB


def test_a_cgroup_v1_limit_and_v1_s_no_limit(tmp_path: Path) -> None:
    cgroups = tmp_path / "cgroup"
    proc = _proc(tmp_path, 11_718_750, "4:memory:/box\n1:cpu:/box\n0::/\n")
    _write(cgroups / "memory" / "memory.limit_in_bytes", "9223372036854771712\n")  # v1's "unlimited"
    _write(cgroups / "memory" / "box" / "memory.limit_in_bytes", f"{5 * GB}\n")
    assert available_memory(proc, cgroups) == 5 * GB
    _write(cgroups / "memory" / "box" / "memory.limit_in_bytes", "9223372036854771712\n")
    assert available_memory(proc, cgroups) == min(12_000_000_000, physical_memory())


def test_nothing_readable_is_the_physical_memory(tmp_path: Path) -> None:
    assert available_memory(tmp_path / "no-proc", tmp_path / "no-cgroup") == physical_memory()


def test_the_limit_is_the_lower_of_available_and_the_physical_share(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cost, "physical_memory", lambda: 24 * GB)
    monkeypatch.setattr(cost, "available_memory", lambda: 22 * GB)
    assert memory_limit() == 18 * GB  # 0.75 x 24
    monkeypatch.setattr(cost, "available_memory", lambda: 12 * GB)
    assert memory_limit() == 12 * GB


def test_a_refusal_names_the_available_memory_and_its_own_alternative(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cost, "available_memory", lambda: 12 * GB)
    estimate = CostEstimate("a task", "its size", 1.0, 16e9, "less, or more time", "less")
    with pytest.raises(CostLimitError, match=r"about 1 s and 16 GB, over the 12 GB of memory this machine "
                                             r"can give now: less$") as refused:
        estimate.check(None)
    assert refused.value.hint == "less"
    estimate.check(None, memory_here=False)  # the memory is another machine's: only the time is checked
    with pytest.raises(CostLimitError, match="over the 0.5 s time limit: less, or more time$"):
        estimate.check(0.5, memory_here=False)
