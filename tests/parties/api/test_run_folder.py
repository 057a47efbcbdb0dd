"""A run's folder (:mod:`mpdp.parties.api.run_folder`): a temporary one when no ``out`` is given, named and kept;
``results.json`` written whole; what ``resume`` refuses, each reason named."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import numpy as np
import pytest

from mpdp.parties.api.run_folder import PreviousRun, RunFolder, data_digest
from mpdp.parties.api.simulation import OUT_FILES
from mpdp.protocols.errors import ParameterError

PARTIES = [{"id": 0, "epsilon": 1.0, "delta": 0.0}, {"id": 1, "epsilon": "inf", "delta": 0.0}]
BITS = np.array([[1, 0], [0, -1]], dtype=np.int8)


def test_no_out_is_a_new_kept_folder_under_the_temporary_directory(capsys: pytest.CaptureFixture[str]) -> None:
    first, second = (RunFolder.open(None, False, False, OUT_FILES) for _ in range(2))
    assert first.temporary and first.path != second.path
    for folder in (first, second):
        assert folder.path.parent == Path(tempfile.gettempdir()) and folder.path.name.startswith("mpdp-run-")
        assert folder.store == folder.path / "transcripts.sqlite"
    assert capsys.readouterr().err.splitlines() == [
        f"mpdp: this run's files (transcript, results.json) are in {f.path}" for f in (first, second)]
    RunFolder.open(None, False, False, OUT_FILES, announce=False)
    assert capsys.readouterr().err == ""


def test_results_json_is_replaced_whole_and_the_run_section_reads_the_store(tmp_path: Path) -> None:
    folder = RunFolder.open(tmp_path / "run", False, False, OUT_FILES)
    section = folder.run_section("running", "s", ("a", "b"), "d")
    assert section == {"status": "running", "folder": str(folder.path), "error": None, "rounds_decided": 0,
                       "rounds": [{"round": 0, "name": "a", "status": "not run"},
                                  {"round": 1, "name": "b", "status": "not run"}],
                       "resume": f"the same inputs and --out {folder.path} --resume (mpdp simulate), or "
                                 f"out='{folder.path}', resume=True (mpdp.simulate)", "data": "d"}
    assert folder.run_section("complete", "s", ("a",), "d")["resume"] is None
    path = folder.write({"run": section})
    assert json.loads(path.read_text()) == {"run": section} and sorted(p.name for p in folder.path.iterdir()) == [
        "results.json"]
    assert folder.stopped(section) is None  # nothing decided: the run's error is the one line
    assert not folder.discard_if_empty(section) and folder.path.is_dir()  # a folder given as out stays
    with pytest.raises(ParameterError, match="without an earlier run"):  # one folder holds one run
        RunFolder.open(tmp_path / "run", False, False, OUT_FILES)
    assert RunFolder.open(tmp_path / "run", False, True, OUT_FILES).path == folder.path


def test_resume_needs_a_folder_with_a_results_json(tmp_path: Path) -> None:
    # each refusal says what is wrong, then what to do, in the API's keywords (the CLI names its flags)
    with pytest.raises(ParameterError) as caught:
        PreviousRun.read(None, False)
    assert str(caught.value) == ("resume=True is not allowed: with out=DIR, the folder of the run to continue (named "
                                 "when the run started)")
    with pytest.raises(ParameterError) as caught:
        PreviousRun.read(tmp_path, True)
    assert str(caught.value) == "force=True is not allowed: False with resume=True (force starts the run afresh)"
    with pytest.raises(ParameterError) as caught:
        PreviousRun.read(tmp_path, False)
    assert str(caught.value) == (f"out={str(tmp_path)!r} is not allowed: a run's folder holding its results.json "
                                 "(nothing to resume there): the folder named when the run started, or resume=False")
    with pytest.raises(ParameterError, match=r"nothing to resume there"):
        PreviousRun.read(tmp_path / "missing", False)
    assert not (tmp_path / "missing").exists()  # a folder without a run is not created
    (tmp_path / "results.json").write_text("{}")
    with pytest.raises(ParameterError, match=r"the results.json of an mpdp simulate run.*unreadable: 'session'"):
        PreviousRun.read(tmp_path, False)


def test_resume_refuses_changed_inputs_naming_each_and_lets_the_round_timeout_change(tmp_path: Path) -> None:
    digest = data_digest(BITS, PARTIES)
    inputs = {"dataset": "votes", "epsilon": "1.0", "repetitions": 30, "round_timeout": None, "seed": None}
    (tmp_path / "results.json").write_text(json.dumps(
        {"inputs": inputs, "session": "sim-1", "seed": 77, "run": {"data": digest}}))
    previous = PreviousRun.read(tmp_path, False)
    assert (previous.session, previous.seed, previous.path) == ("sim-1", 77, tmp_path)
    previous.check(inputs | {"round_timeout": 90.0}, digest)  # the one input that may change
    with pytest.raises(ParameterError) as info:
        previous.check(inputs | {"epsilon": "2", "repetitions": 31}, digest)
    assert str(info.value) == (f"cannot resume the run in {tmp_path}: its inputs changed (only round_timeout may "
                               "change): epsilon: 1.0 -> 2; repetitions: 30 -> 31; resume with the recorded inputs, "
                               "or start a new run in another folder")  # epsilons as written, not quoted
    edited = BITS.copy()
    edited[0, 0] = 0
    for other in (data_digest(edited, PARTIES), data_digest(BITS, [PARTIES[0], PARTIES[0]])):
        with pytest.raises(ParameterError, match=r"its inputs changed .*: the votes or the parties' epsilon/delta"):
            previous.check(inputs, other)


def test_resume_compares_epsilon_and_budget_by_value_not_spelling(tmp_path: Path) -> None:
    """``--epsilon 1`` against a recorded ``1.0`` (or ``1e0``, or the API's ``1.0`` against the CLI's ``1``) was a
    changed input; the same values now resume, other values are still refused, named as written."""
    digest = data_digest(BITS, PARTIES)
    inputs = {"epsilon": "1", "budget": "50,1e-5", "repetitions": 30}
    (tmp_path / "results.json").write_text(json.dumps(
        {"inputs": inputs, "session": "sim-1", "seed": 77, "run": {"data": digest}}))
    previous = PreviousRun.read(tmp_path, False)
    for epsilon in ("1", "1.0", "1.00", "1e0"):
        for budget in ("50,1e-5", "50.0,0.00001", (50, 1e-5), [50.0, 0.00001]):
            previous.check(inputs | {"epsilon": epsilon, "budget": budget}, digest)
    for changed, line in [({"epsilon": "2"}, "epsilon: 1 -> 2"), ({"epsilon": "1:2"}, "epsilon: 1 -> 1:2"),
                          ({"epsilon": "per party (see parties)"}, "epsilon: 1 -> per party (see parties)"),
                          ({"budget": (50, 1e-4)}, "budget: 50,1e-5 -> [50, 0.0001]"),
                          ({"budget": None}, "budget: 50,1e-5 -> null")]:
        with pytest.raises(ParameterError) as info:
            previous.check(inputs | changed, digest)
        assert str(info.value) == (f"cannot resume the run in {tmp_path}: its inputs changed (only round_timeout "
                                   f"may change): {line}; resume with the recorded inputs, or start a new run in "
                                   "another folder")


def test_the_command_line_names_its_flags_for_the_same_refusals(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    from tests.parties.cli.invoke import refused
    assert refused(capsys, "simulate", "--parties", "3", "--resume") == (
        "mpdp: error: --resume is not allowed: with --out DIR, the folder of the run to continue (named when the "
        "run started)")
    assert refused(capsys, "simulate", "--parties", "3", "--resume", "--out", str(tmp_path)).startswith(
        f"mpdp: error: --out={str(tmp_path)!r} is not allowed: a run's folder holding its results.json")
