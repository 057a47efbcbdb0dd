"""``mpdp export``: a run's transcripts in long form (session, round, party, repetition, symbol), as CSV and
Parquet, from a real SQLite transcript store; the rows are the stored symbols, nothing for abstentions."""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import numpy as np
import pytest

from mpdp.parties.api.schemas import validate_document
from mpdp.parties.rounds.store import TranscriptStore
from mpdp.parties.session.export import COLUMNS, export_transcripts
from mpdp.protocols.errors import ParameterError
from tests.parties.cli.invoke import ok, refused
from tests.parties.rounds.test_store import REPS, _record

#: (round, party) -> the symbols sent, as _record stores them below; party 2 abstains in round 0.
SENT = {(0, 0): [1, 0, 1], (0, 3): [2, 3, 0], (1, 1): [0, 0, 1]}


def _run_dir(tmp_path: Path) -> Path:
    run = tmp_path / "run"
    run.mkdir()
    with TranscriptStore(run / "transcripts.sqlite") as store:
        store.open_session("s1", 4, REPS, ["bill 0", "bill 1"], mode="simulation (seeded generators)")
        store.record_round(_record(0, {0: SENT[0, 0], 3: SENT[0, 3]}, abstain=(2,)))
        store.record_round(_record(1, {1: SENT[1, 1]}))
    return run


def _expected() -> list[tuple[str, int, int, int, int]]:
    return [("s1", r, p, rep, s) for (r, p), symbols in sorted(SENT.items()) for rep, s in enumerate(symbols)]


def test_csv_holds_one_row_per_released_symbol(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = _run_dir(tmp_path)
    doc = ok(capsys, "export", str(run), "--json")
    validate_document(doc)
    assert (doc["rows"], doc["sessions"], doc["path"]) == (9, ["s1"], str(run / "transcripts.csv"))
    rows = list(csv.reader((run / "transcripts.csv").read_text().splitlines()))
    assert tuple(rows[0]) == COLUMNS
    assert [(s, int(r), int(p), int(rep), int(x)) for s, r, p, rep, x in rows[1:]] == _expected()


def test_parquet_has_the_same_rows(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    run = _run_dir(tmp_path)
    target = tmp_path / "t.parquet"
    assert "9 rows" in ok(capsys, "export", str(run), "--format", "parquet", "--out", str(target))
    table = pq.read_table(target)
    assert table.column_names == list(COLUMNS)
    assert list(zip(*(table.column(c).to_pylist() for c in COLUMNS), strict=True)) == _expected()
    assert str(table.schema.field("symbol").type) == "uint8"


def test_parquet_without_pyarrow_names_the_extra(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow now raises ImportError
    line = refused(capsys, "export", str(_run_dir(tmp_path)), "--format", "parquet")
    assert "mpdp[parquet]" in line and "--format='parquet'" in line


def test_a_directory_without_a_transcript_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    line = refused(capsys, "export", str(tmp_path))
    assert "RUN_DIR" in line and "transcripts.sqlite" in line
    with pytest.raises(ParameterError, match="format"):
        export_transcripts(tmp_path, "xlsx")


def test_an_unknown_session_is_refused(tmp_path: Path) -> None:
    with TranscriptStore(_run_dir(tmp_path) / "transcripts.sqlite") as store:
        with pytest.raises(ParameterError, match="s1"):
            store.symbol_columns("nope")
        columns = store.symbol_columns("s1")
    assert columns["symbol"].dtype == np.uint8 and len(columns["round"]) == 9


def test_the_format_follows_the_extension(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--out h.parquet`` without ``--format`` wrote CSV (the default format) under the parquet name."""
    pq = pytest.importorskip("pyarrow.parquet")
    run = _run_dir(tmp_path)
    doc = ok(capsys, "export", str(run), "--out", str(tmp_path / "h.parquet"), "--json")
    assert (doc["format"], doc["path"], doc["rows"]) == ("parquet", str(tmp_path / "h.parquet"), 9)
    assert pq.read_table(tmp_path / "h.parquet").num_rows == 9
    assert ok(capsys, "export", str(run), "--out", str(tmp_path / "h.CSV")).startswith(f"wrote {tmp_path / 'h.CSV'} (csv)")
    assert (tmp_path / "h.CSV").read_text().splitlines()[0] == ",".join(COLUMNS)


def test_parquet_by_its_extension_without_pyarrow_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    target = tmp_path / "h.parquet"
    assert refused(capsys, "export", str(_run_dir(tmp_path)), "--out", str(target)) == (
        f"mpdp: error: --out={str(target)!r} is not allowed: a .parquet file with pyarrow installed (pip install "
        "'mpdp[parquet]'), or a .csv file")
    assert not target.exists()


@pytest.mark.parametrize(("argv", "line"), [
    (["--out", "h.parquet", "--format", "csv"],
     "--format='csv' is not allowed: parquet, as --out h.parquet ends, or omitted (the format follows the extension)"),
    (["--out", "h.csv", "--format", "parquet"],
     "--format='parquet' is not allowed: csv, as --out h.csv ends, or omitted (the format follows the extension)"),
    (["--out", "h.txt"], "--out='h.txt' is not allowed: a file ending in .csv or .parquet, or another name with "
                         "--format csv or --format parquet"),
])
def test_a_format_the_name_does_not_say_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                   monkeypatch: pytest.MonkeyPatch, argv: list[str], line: str) -> None:
    monkeypatch.chdir(tmp_path)
    run = _run_dir(tmp_path)
    assert refused(capsys, "export", str(run), *argv) == f"mpdp: error: {line}"
    assert not any(tmp_path.glob("h.*"))


def test_another_name_takes_the_format_given(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = _run_dir(tmp_path)
    assert "(csv): 9 rows" in ok(capsys, "export", str(run), "--out", str(tmp_path / "h.txt"), "--format", "csv")
    assert (tmp_path / "h.txt").read_text().splitlines()[0] == ",".join(COLUMNS)
