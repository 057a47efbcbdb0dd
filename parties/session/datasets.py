"""Datasets: one private bit per party and round.

* ``house-votes-84``: the 1984 House votes shipped with the package (435 members, 16 bills; see
  ``parties/data/README.md`` for the attribution, CC BY 4.0). ``?`` means the member did not vote:
  that member takes no part in that bill's round.
* any CSV file: one row per party, one column per round, values ``1``/``0`` or ``y``/``n``
  (case-insensitive), ``?`` or empty for "takes no part"; a UTF-8 byte order mark is skipped. A first
  row of names (no vote in it) is the header and names the rounds; a first row mixing names and votes
  is refused. Column 1 is kept as party labels when every cell of it is text (e.g. ``democrat``), or
  as ``--label-column`` says; a column 1 mixing votes and text is refused (a typo there must not
  silently turn a column of votes into labels). Round names repeated in the header are refused (naming
  one), and so is a file separated by ``;``, tabs or ``|`` (naming the separator found).
* random bits: ``random_dataset(parties, rounds, rng)``.
"""

from __future__ import annotations

import collections
import csv
import io
import os
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from mpdp.parties.rounds.text_files import read_text_file
from mpdp.protocols.errors import DatasetError, ParameterError

__all__ = ["ABSENT", "DATASET_NAMES", "Dataset", "load_dataset", "random_dataset"]

#: The value of ``Dataset.bits`` for a party that takes no part in a round.
ABSENT = -1
HOUSE = "house-votes-84"
DATASET_NAMES = (HOUSE,)
_VALUES = {"1": 1, "y": 1, "0": 0, "n": 0, "?": ABSENT, "": ABSENT}
_ALLOWED = "1/0, y/n, or ?/empty for a party that takes no part"


@dataclass(frozen=True, slots=True)
class Dataset:
    """Private bits of k parties over R rounds.

    Attributes:
        name: the dataset's name or path.
        round_names: R names (bills for the House).
        bits: int8 array of shape (k, R), values 1, 0 or ``ABSENT`` (-1).
        labels: k party labels (the House: ``democrat``/``republican``), or empty strings.
        source: attribution text, empty for random data.
    """

    name: str
    round_names: tuple[str, ...]
    bits: NDArray[np.int8] = field(repr=False)
    labels: tuple[str, ...] = field(repr=False)
    source: str = ""

    @property
    def num_parties(self) -> int:
        """k, the number of parties (rows)."""
        return int(self.bits.shape[0])

    @property
    def num_rounds(self) -> int:
        """R, the number of rounds (columns)."""
        return int(self.bits.shape[1])

    def participants(self, round_index: int) -> NDArray[np.int64]:
        """Party ids (int64, ascending) that take part in a round."""
        return np.flatnonzero(self.bits[:, round_index] != ABSENT)


def _is_value(cell: str) -> bool:
    return cell.strip().lower() in _VALUES


def _is_name(cell: str) -> bool:
    """A header or label cell: text that is not a vote (an empty cell is neither)."""
    return bool(cell.strip()) and not _is_value(cell)


def _header(rows: list[list[str]], name: str) -> list[str] | None:
    """The header row, if the first row is one: its round cells (column 2 on; column 1 of a one-column
    file) are names, none a vote. A first row mixing names and votes is refused: it is a header with a
    vote in it or a data row with a typo, and reading it either way could silently lose a row."""
    head, rest = rows[0][0], rows[0][1:]
    names = [c.strip() for c in rest if _is_name(c)]
    votes = [c.strip() for c in rest if c.strip() and _is_value(c)]
    if names and (votes or (head.strip() and _is_value(head))):
        raise DatasetError(f"{name}: line 1", ",".join(rows[0]),
                           "a header of round names (no 1/0/y/n/? cell) or a row of votes (no other text)",
                           hint=f"it mixes the name {names[0]!r} with the vote {(votes or [head.strip()])[0]!r}")
    if names or (not rest and _is_name(head)):
        return rows[0]
    return None


def _has_labels(body: list[list[str]], header: list[str] | None, name: str, label_column: bool | None) -> bool:
    """Whether column 1 holds party labels: as ``label_column`` says, or (None) when every cell of it
    is text that is not a vote. A column 1 mixing votes and text is refused, never guessed."""
    if label_column is not None:
        return label_column
    texts = [r for r, row in enumerate(body) if row and _is_name(row[0])]
    if not texts:
        return False
    if len(texts) < len(body):
        line = next(r for r in range(len(body)) if r not in set(texts)) + 1 + (header is not None)
        text_line = texts[0] + 1 + (header is not None)
        raise DatasetError(
            f"{name}: column 1", f"{body[texts[0]][0].strip()} (line {text_line})",
            "all party labels or all votes (1/0/y/n/?)",
            hint=f"line {line} has the vote {body[line - 1 - (header is not None)][0].strip()!r} there; "
                 "a label column (label_column=True, --label-column) reads column 1 as labels, none as votes")
    return True


def parse_csv(text: str, name: str, label_column: bool | None = None) -> Dataset:
    """Parse CSV text (see the module docstring for the format); a UTF-8 byte order mark is skipped.

    Args:
        label_column: column 1 holds party labels (True) or votes (False); None: labels when every
            cell of column 1 is text that is not a vote.

    Raises:
        DatasetError: no data rows, ragged rows, a first row mixing names and votes, a column 1 mixing
            labels and votes (with ``label_column`` None), or a cell other than 1/0/y/n/?/empty (names
            row, column and value).
    """
    try:
        rows = [row for row in csv.reader(io.StringIO(text.removeprefix("\ufeff"))) if any(c.strip() for c in row)]
    except csv.Error as exc:
        raise DatasetError("dataset", name, "a CSV of 1/0, y/n or ? cells", hint=str(exc)) from None
    if not rows:
        raise DatasetError("dataset", name, "at least one row of 0/1 or y/n/? values")
    _check_separator(rows, name)
    header = _header(rows, name)
    body = rows[1:] if header is not None else rows
    if not body:
        raise DatasetError("dataset", name, "at least one data row after the header")
    has_labels = _has_labels(body, header, name, label_column)
    width = len(body[0])
    if header is not None and len(header) != width:
        raise DatasetError(f"{name}: line 1", len(header), f"{width} cells, as the data rows",
                           message=f"{name}: the header has {len(header)} cells, the data rows have {width}")
    first = 1 if has_labels else 0
    bits = np.empty((len(body), width - first), dtype=np.int8)
    for r, row in enumerate(body):
        if len(row) != width:
            line = r + 1 + (header is not None)
            raise DatasetError(f"{name}: line {line}", len(row), f"{width} cells, as the first row",
                               message=f"{name}: line {line} has {len(row)} cells, the first row has {width}")
        for c, cell in enumerate(row[first:]):
            value = _VALUES.get(cell.strip().lower())
            if value is None:
                column = header[c + first] if header else f"column {c + first + 1}"
                raise DatasetError(
                    f"{name}: line {r + 1 + (header is not None)}, {column}", cell, _ALLOWED
                )
            bits[r, c] = value
    if bits.shape[1] == 0:
        raise DatasetError("dataset", name, "at least one column of votes")
    names = (
        tuple(h.strip() for h in header[first:]) if header
        else tuple(f"round-{j + 1}" for j in range(bits.shape[1]))
    )
    repeated = [n for n, count in collections.Counter(names).items() if count > 1]
    if repeated:
        raise DatasetError(f"{name}: line 1", repeated[0], "a header whose round names are all different",
                           message=f"{name}: the header names round {repeated[0]!r} more than once "
                                   f"({len(repeated)} repeated name(s)): rename one, each round needs its own name")
    labels = tuple(row[0].strip() for row in body) if has_labels else ("",) * len(body)
    return Dataset(name, names, bits, labels)


#: Separators other than the comma that spreadsheet programs write (named in the error when found).
_OTHER_SEPARATORS = {";": "semicolon ';'", "\t": "tab", "|": "vertical bar '|'"}


def _check_separator(rows: list[list[str]], name: str) -> None:
    """Refuse a file whose every line is one comma-free cell holding another separator (a ``;``- or
    tab-separated export), naming the separator found.

    Raises:
        DatasetError: the separator found, and that mpdp reads commas.
    """
    if any(len(row) != 1 for row in rows):
        return
    for separator, label in _OTHER_SEPARATORS.items():
        if all(separator in row[0] for row in rows[:50]):
            raise DatasetError("dataset", name, "a CSV with comma-separated cells",
                               message=f"{name}: the cells are separated by a {label}, not commas (line 1: "
                                       f"{rows[0][0][:60]!r}): save it as CSV with commas")


def load_dataset(spec: str, label_column: bool | None = None) -> Dataset:
    """Load ``house-votes-84`` (shipped) or a CSV file path (``label_column``: as :func:`parse_csv`).

    Raises:
        DatasetError: an unknown name that is no readable file, a malformed file, or a ``spec`` that is no
            name or path (e.g. a number).
    """
    if not isinstance(spec, (str, os.PathLike)):
        raise DatasetError("dataset", spec, f"a dataset name ({', '.join(DATASET_NAMES)}) or the path of a CSV file")
    if spec == HOUSE:
        package = resources.files("mpdp.parties") / "data"
        text = (package / "house-votes-84.csv").read_text(encoding="utf-8")
        source = (package / "README.md").read_text(encoding="utf-8").split("\n\n")[1].strip()
        data = parse_csv(text, HOUSE)
        return Dataset(HOUSE, data.round_names, data.bits, data.labels, source.replace("\n", " "))
    path = Path(spec)
    if not path.is_file():
        found = "a folder" if path.is_dir() else "no such file"
        raise DatasetError("dataset", spec, f"one of {', '.join(DATASET_NAMES)} or a CSV file path "
                           f"({found}: {path.resolve()})")
    return parse_csv(read_text_file(path, "dataset", "CSV file", DatasetError), str(path), label_column)


def random_dataset(parties: int, rounds: int, rng: np.random.Generator) -> Dataset:
    """Uniformly random bits for ``parties`` parties and ``rounds`` rounds (every party takes part).

    Raises:
        ParameterError: parties < 1 or rounds < 1.
    """
    if parties < 1:
        raise ParameterError("parties", parties, "an integer >= 1")
    if rounds < 1:
        raise ParameterError("rounds", rounds, "an integer >= 1")
    bits = rng.integers(0, 2, size=(parties, rounds), dtype=np.int8)
    names = tuple(f"round-{j + 1}" for j in range(rounds))
    return Dataset(f"random:{parties}x{rounds}", names, bits, ("",) * parties)
