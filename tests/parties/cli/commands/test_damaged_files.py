"""Damaged transcript stores (bytes flipped in a real SQLite file) before ``mpdp export``, ``mpdp report`` and
``mpdp observe --out/--resume``: one line naming the file, exit 2, no output file; never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from mpdp.parties.cli.main import main
from mpdp.parties.rounds.store import TranscriptStore, check_store_file
from mpdp.protocols.errors import ParameterError
from tests.parties.cli.invoke import refused
from tests.parties.rounds.test_store import REPS, _record

ROUNDS = 40
PAGE = 4096


def _store(run: Path) -> Path:
    """A real store of many pages: 40 rounds of 4 parties (symbols of every party)."""
    run.mkdir(parents=True, exist_ok=True)
    path = run / "transcripts.sqlite"
    rng = np.random.default_rng(1)
    with TranscriptStore(path) as store:
        store.open_session("s1", 4, REPS, [f"bill {r}" for r in range(ROUNDS)], mode="simulation (seeded generators)")
        for r in range(ROUNDS):
            store.record_round(_record(r, {p: rng.integers(0, 2, REPS).tolist() for p in range(4)}))
    assert path.stat().st_size > 8 * PAGE and not (run / "transcripts.sqlite-wal").exists()
    return path


def _damage_page(path: Path, page: int) -> None:
    data = bytearray(path.read_bytes())
    data[page * PAGE:(page + 1) * PAGE] = np.random.default_rng(page).integers(0, 256, PAGE, dtype=np.uint8).tobytes()
    path.write_bytes(bytes(data))


def test_an_intact_store_passes_and_a_damaged_page_is_named(tmp_path: Path) -> None:
    path = _store(tmp_path / "run")
    check_store_file(path)
    _damage_page(path, 3)
    with pytest.raises(ParameterError, match=r"transcripts=.*transcripts.sqlite.*damaged"):
        check_store_file(path)
    (tmp_path / "junk.sqlite").write_bytes(b"not a database at all" * 300)
    with pytest.raises(ParameterError, match="junk.sqlite"):
        check_store_file(tmp_path / "junk.sqlite")


def test_export_and_report_of_a_damaged_store_are_one_line_and_no_file(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run"
    path = _store(run)
    (run / "decisions.json").write_text(json.dumps(_decisions()))
    _damage_page(path, 4)
    line = refused(capsys, "export", str(run))
    assert str(path) in line and "damaged" in line
    assert sorted(p.name for p in run.iterdir()) == ["decisions.json", "transcripts.sqlite"]
    line = refused(capsys, "report", str(run))
    assert str(path) in line and "damaged" in line
    assert sorted(p.name for p in run.iterdir()) == ["decisions.json", "transcripts.sqlite"]


def test_flipped_bytes_never_give_a_traceback_or_a_partial_export(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    pristine = _store(tmp_path / "pristine").read_bytes()
    rng = np.random.default_rng(22)
    outcomes = {0: 0, 2: 0}
    for trial in range(150):
        run = tmp_path / f"run{trial}"
        run.mkdir()
        data = bytearray(pristine)
        for at in rng.integers(0, len(data), int(rng.integers(1, 20))):
            data[at] ^= int(rng.integers(1, 256))
        (run / "transcripts.sqlite").write_bytes(bytes(data))
        code = main(["export", str(run)])  # any other exception fails the test (a traceback)
        captured = capsys.readouterr()
        outcomes[code] += 1
        if code == 2:
            assert len(captured.err.strip().splitlines()) == 1 and "transcripts" in captured.err
            assert not (run / "transcripts.csv").exists()
        else:
            rows = (run / "transcripts.csv").read_text().splitlines()
            assert rows[0] == "session,round,party,repetition,symbol" and len(rows) >= 1
        assert not list(run.glob(".*partial"))
    assert outcomes[2] > 0  # measured: most flips land in data pages and are caught


def test_observe_refuses_a_damaged_store_in_its_out_dir(keys_folder: Path, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    path = _store(out)
    _damage_page(path, 2)
    observe = ["observe", "--roster", str(keys_folder / "roster.json"), "--keys", str(keys_folder / "coordinator"),
               "--rounds", "1", "--broker", "mqtt://127.0.0.1:1", "--out", str(out)]
    for extra in ((), ("--resume",)):
        line = refused(capsys, *observe, *extra)
        assert str(path) in line and "damaged" in line


def _decisions() -> dict[str, object]:
    return {"schema_version": 1, "kind": "observe", "mpdp_version": "0", "session": "s1", "function": "majority",
            "repetitions": REPS, "mode": "m", "broker": "b", "store": "transcripts.sqlite", "protocol": "rr",
            "rounds": [{"round": 0, "name": "<script>x</script> *bill* | [a](b)", "status": "complete",
                        "participants": [0], "abstained": [], "absent": [], "messages_received": 1,
                        "messages_rejected": 0, "decisions": [1] * REPS, "posterior_of_decision": [0.9] * REPS,
                        "expected_ones": [1.0] * REPS}]}


def test_report_md_and_html_escape_user_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run"
    _store(run)
    (run / "decisions.json").write_text(json.dumps(_decisions()))
    assert main(["report", str(run)]) == 0
    capsys.readouterr()
    markdown = (run / "report.md").read_text()
    assert "<script>" not in markdown and "&lt;script&gt;x&lt;/script&gt; \\*bill\\* \\| \\[a\\](b)" in markdown
    page = (run / "report.html").read_text()
    assert "<script>x" not in page and "&lt;script&gt;x&lt;/script&gt; *bill* | [a](b)" in page
