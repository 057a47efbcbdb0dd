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
