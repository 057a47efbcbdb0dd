"""parties.session.output_paths: the files and directories a run or command writes, checked before any work."""

import os

import pytest

from mpdp.parties.session.output_paths import (
    fresh_output_dir,
    output_dir,
    output_file,
    plot_file,
    plot_suffixes,
    run_files,
)
from mpdp.protocols.errors import ParameterError


def test_output_file_accepts_a_writable_path(tmp_path) -> None:
    target = tmp_path / "a.png"
    assert plot_file(str(target)) == target
    assert not target.exists()  # checked, not left behind
    assert output_file(tmp_path / "table.txt", "--out") == tmp_path / "table.txt"


def test_plot_suffixes_are_matplotlibs() -> None:
    assert {"png", "pdf", "svg"} <= set(plot_suffixes())
    assert "xyz" not in plot_suffixes()


@pytest.mark.parametrize("make, why", [
    (lambda d: "", "not empty"),
    (lambda d: str(d), "not a directory"),
    (lambda d: str(d / "nodir" / "a.png"), "does not exist"),
    (lambda d: str(d / "x.xyz"), ".png"),
    (lambda d: str(d / "nc1"), ".png"),  # no suffix: refused, never silently written as nc1.png
    (lambda d: "/proc/x.png", "may write"),
])
def test_plot_file_refuses_bad_paths(tmp_path, make, why: str) -> None:
    path = make(tmp_path)
    with pytest.raises(ParameterError) as info:
        plot_file(path)
    assert why in str(info.value) and "--plot" in str(info.value) and len(str(info.value).splitlines()) == 1


def test_output_file_refuses_a_file_as_parent(tmp_path) -> None:
    (tmp_path / "f").write_text("")
    with pytest.raises(ParameterError, match="does not exist"):
        output_file(tmp_path / "f" / "a.png", "--plot")


def test_output_dir(tmp_path) -> None:
    target = tmp_path / "a" / "b"
    assert output_dir(str(target), "--out") == target and target.is_dir()
    (tmp_path / "file").write_text("")
    for bad in ("", str(tmp_path / "file"), "/proc/foo"):
        with pytest.raises(ParameterError, match="--out"):
            output_dir(bad, "--out")


def test_output_file_refuses_read_only_file(tmp_path) -> None:
    target = tmp_path / "ro.png"
    target.write_text("")
    target.chmod(0o444)
    if os.access(target, os.W_OK):  # root may write anyway: nothing to refuse
        pytest.skip("this user can write read-only files")
    with pytest.raises(ParameterError):
        plot_file(target)


def test_one_run_per_output_directory(tmp_path) -> None:
    files = run_files("t.sqlite", "results.json")
    assert files == ("t.sqlite", "t.sqlite-wal", "t.sqlite-shm", "results.json")
    assert fresh_output_dir(tmp_path / "new", "--out", files, force=False) == tmp_path / "new"
    for name in ("t.sqlite", "t.sqlite-wal", "results.json", "notes.txt"):
        (tmp_path / name).write_text("earlier")
    with pytest.raises(ParameterError, match=r"it holds t.sqlite, t.sqlite-wal, results.json.*--force"):
        fresh_output_dir(tmp_path, "--out", files, force=False)
    assert (tmp_path / "t.sqlite").exists()  # refused: nothing deleted
    fresh_output_dir(tmp_path, "--out", files, force=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new", "notes.txt"]  # only the run's files go


def test_the_hint_names_force_as_the_caller_names_out(tmp_path) -> None:
    """The Python API (out=) is told force=True, the command line (--out) --force."""
    from mpdp.parties.session.output_paths import fresh_output_dir
    from mpdp.protocols.errors import ParameterError
    (tmp_path / "sweep.json").write_text("{}")
    for name, force in (("out", "force=True"), ("--out", "--force")):
        with pytest.raises(ParameterError) as caught:
            fresh_output_dir(tmp_path, name, ["sweep.json"], False)
        assert str(caught.value).endswith(f"(give a new directory, or {force} to replace that run's files)"), caught.value
