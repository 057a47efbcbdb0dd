"""A run's transcripts in long form, for pandas, R, DuckDB or a spreadsheet (``mpdp export RUN_DIR``).

One row per released symbol: ``session``, ``round`` (the 0-based round index), ``party``, ``repetition``,
``symbol`` (0/1; 0-3 for four-output randomized response), from every session of the run's
``transcripts.sqlite`` (:meth:`mpdp.parties.rounds.store.TranscriptStore.symbol_columns`). Abstentions
and absent parties release nothing, so they have no rows. CSV is stdlib; Parquet needs pyarrow (the
optional extra ``mpdp[parquet]``).
"""

from __future__ import annotations

import csv
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mpdp.parties.rounds.store import TranscriptStore, check_store_file
from mpdp.protocols.errors import ParameterError

__all__ = ["COLUMNS", "EXPORT_FORMATS", "PARQUET_EXTRA", "Export", "export_format", "export_transcripts"]

#: The columns, in order.
COLUMNS = ("session", "round", "party", "repetition", "symbol")
#: ``--format`` choices.
EXPORT_FORMATS = ("csv", "parquet")
#: The optional extra that brings pyarrow.
PARQUET_EXTRA = "parquet"
_STORE = "transcripts.sqlite"


@dataclass(frozen=True, slots=True)
class Export:
    """What :func:`export_transcripts` wrote: the file, its format, its row count and the sessions in it."""

    path: Path
    format: str
    rows: int
    sessions: tuple[str, ...]


def export_format(fmt: str | None, out: str | Path | None) -> str:
    """The format to write: the one ``out``'s extension names (``.csv``, ``.parquet``, any case), else
    ``fmt``, else CSV when no ``out`` is given (``h.parquet`` was written as CSV when pyarrow was missing, or
    with the default format: a file whose name says another format than its content).

    Raises:
        ParameterError: ``fmt`` not in :data:`EXPORT_FORMATS`; ``fmt`` contradicting ``out``'s extension; an
            ``out`` of another extension with no ``fmt``.

    Example:
        >>> export_format(None, "h.parquet"), export_format(None, None), export_format("csv", "h.txt")
        ('parquet', 'csv', 'csv')
    """
    if fmt is not None and fmt not in EXPORT_FORMATS:
        raise ParameterError("format", fmt, "one of " + ", ".join(EXPORT_FORMATS))
    named = None if out is None else Path(out).suffix.lower().removeprefix(".")
    if named in EXPORT_FORMATS:
        if fmt is not None and fmt != named:
            raise ParameterError("format", fmt, f"{named}, as out={str(out)!r} ends, or omitted (the format "
                                                "follows the extension)")
        return named
    if fmt is None and out is not None:
        raise ParameterError("out", str(out), "a file ending in .csv or .parquet, or another name with "
                                              "format='csv' or format='parquet'")
    return fmt or "csv"


def export_transcripts(run_dir: str | Path, fmt: str | None = None, out: str | Path | None = None) -> Export:
    """Write the transcripts of ``run_dir/transcripts.sqlite`` in long form (:data:`COLUMNS`).

    Args:
        run_dir: a run's ``--out`` directory (``mpdp simulate``, ``mpdp observe``).
        fmt: ``"csv"`` or ``"parquet"``; None: as ``out``'s extension says (:func:`export_format`), CSV
            without ``out``. out: the file to write (default ``run_dir/transcripts.<fmt>``).

    Returns:
        :class:`Export` (its ``format`` the one written).

    Raises:
        ParameterError: no ``transcripts.sqlite`` in ``run_dir`` (a run without ``--out`` keeps none), a
            damaged one (:func:`mpdp.parties.rounds.store.check_store_file`; nothing is written then), a
            format not in :data:`EXPORT_FORMATS` or not the one ``out``'s extension names, an ``out`` of
            another extension without ``fmt``, or parquet without pyarrow (names the extra).
    """
    asked, fmt = fmt, export_format(fmt, out)
    store_path = Path(run_dir) / _STORE
    if not store_path.is_file():
        raise ParameterError("run_dir", str(run_dir), f"a run directory holding {_STORE} (simulate or observe "
                                                      "with --out DIR)")
    if fmt == "parquet":
        try:
            import pyarrow
            import pyarrow.parquet
        except ImportError:
            install = f"pyarrow installed (pip install 'mpdp[{PARQUET_EXTRA}]')"
            if asked is None:  # the name asked for parquet
                raise ParameterError("out", str(out), f"a .parquet file with {install}, or a .csv file") from None
            raise ParameterError("format", fmt, f"parquet with {install}, or csv") from None
    target = Path(out) if out is not None else Path(run_dir) / f"transcripts.{fmt}"
    check_store_file(store_path)
    try:
        with TranscriptStore(store_path) as store:
            sessions = tuple(store.sessions())
            parts = [(s, store.symbol_columns(s)) for s in sessions]
    except (sqlite3.Error, UnicodeDecodeError) as exc:  # damage quick_check did not see: still one line, no file
        raise ParameterError("transcripts", str(store_path), "an intact SQLite transcript store",
                             hint=f"damaged: {exc}; restore it from a copy") from None
    rows = sum(len(columns["symbol"]) for _, columns in parts)
    partial = target.with_name(f".{target.name}.partial")  # renamed once complete: never a partial export
    try:
        if fmt == "csv":
            with partial.open("w", newline="", encoding="utf-8") as handle:
                writer = csv.writer(handle, lineterminator="\n")
                writer.writerow(COLUMNS)
                for session, c in parts:
                    writer.writerows(zip([session] * len(c["symbol"]), c["round"].tolist(), c["party"].tolist(),
                                         c["repetition"].tolist(), c["symbol"].tolist(), strict=True))
        else:
            table = pyarrow.table({
                "session": pyarrow.array([s for s, c in parts for _ in range(len(c["symbol"]))], pyarrow.string()),
                **{name: pyarrow.array(np.concatenate([c[name] for _, c in parts]) if parts else
                                       np.zeros(0, dtype=np.uint8 if name == "symbol" else np.int64))
                   for name in COLUMNS[1:]},
            })
            pyarrow.parquet.write_table(table, partial)
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
    return Export(target, fmt, rows, sessions)
