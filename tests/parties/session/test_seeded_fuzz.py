"""10^4 seeded mutations of each genuine file input (roster, party key file, per-party epsilon file, TOML config,
dataset CSV, the keys folder's note of answer records): each loads or is one :class:`ParameterError`; never
another exception (0 tracebacks). A seeded mutator (bytes flipped, inserted, deleted, a span repeated, the file
cut, a byte order mark), so every run tries the same 10^4 inputs per file in a few seconds; the hypothesis
tests beside it (test_input_fuzz.py, tests/parties/rounds/test_fuzz.py) search more widely with fewer."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from mpdp.parties.cli.args import apply_config
from mpdp.parties.cli.main import build_parser
from mpdp.parties.rounds.session_files import party_key_path, read_private_key, read_roster, write_session
from mpdp.parties.session.datasets import load_dataset
from mpdp.parties.session.epsilons import parse_mechanisms
from mpdp.parties.session.host_records import _read_note
from mpdp.protocols.errors import ParameterError
from mpdp.protocols.randomization.mechanisms import RandomizedResponse

INPUTS = 10_000


def mutate(genuine: bytes, rng: np.random.Generator) -> bytes:
    """One seeded mutation of ``genuine``: 1-4 edits drawn from flip, insert, delete, repeat, cut, BOM."""
    data = bytearray(genuine)
    for _ in range(int(rng.integers(1, 5))):
        at = int(rng.integers(0, len(data) + 1))
        edit = int(rng.integers(0, 6))
        if edit == 0 and data:  # flip a byte
            data[min(at, len(data) - 1)] = int(rng.integers(0, 256))
        elif edit == 1:  # insert random bytes
            data[at:at] = rng.integers(0, 256, int(rng.integers(1, 9)), dtype=np.uint8).tobytes()
        elif edit == 2:  # delete a span
            del data[at:at + int(rng.integers(1, 17))]
        elif edit == 3:  # repeat a span
            data[at:at] = data[at:at + int(rng.integers(1, 33))]
        elif edit == 4:  # cut the file
            del data[at:]
        else:
            data[:0] = b"\xef\xbb\xbf"
    return bytes(data)


def _fuzz(genuine: bytes, path: Path, load: Callable[[Path], object], seed: int) -> dict[str, int]:
    """Write ``INPUTS`` mutations of ``genuine`` to ``path`` and load each; the counts of loaded and refused
    inputs (any other exception fails the test, naming the input)."""
    rng = np.random.default_rng(seed)
    counts = {"loaded": 0, "refused": 0}
    for _ in range(INPUTS):
        payload = mutate(genuine, rng)
        path.write_bytes(payload)
        try:
            load(path)
        except ParameterError as exc:
            assert "\n" not in str(exc).strip(), (payload, exc)
            counts["refused"] += 1
            continue
        except Exception as exc:  # noqa: BLE001 - the law: nothing but ParameterError
            pytest.fail(f"{type(exc).__name__}: {exc} for {payload!r}")
        counts["loaded"] += 1
    return counts


@pytest.fixture
def scratch(tmp_path: Path) -> Iterator[Path]:
    """Where the mutated files are written: a folder in memory (/dev/shm, 70 us a write here) when there is
    one, else ``tmp_path`` (a disk write cost 3.8 ms, 50 times the load)."""
    shm = Path("/dev/shm")
    folder = Path(tempfile.mkdtemp(prefix="mpdp-fuzz-", dir=shm)) if os.access(shm, os.W_OK) else tmp_path
    yield folder
    if folder != tmp_path:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("keys")
    write_session(folder, "fuzz-1", [RandomizedResponse(0.5), RandomizedResponse(1.0, 0.01)])
    return folder


def test_roster(session: Path, scratch: Path) -> None:
    counts = _fuzz((session / "roster.json").read_bytes(), scratch / "roster.json", read_roster, 1)
    assert counts["refused"] > INPUTS // 2 and counts["loaded"] > 0  # inside JSON whitespace, edits still load


def test_party_key_file(session: Path, scratch: Path) -> None:
    facts = read_roster(session / "roster.json")
    key = scratch / "party-1.key"

    def load(path: Path) -> object:
        path.chmod(0o600)
        return read_private_key(path, facts, 1)

    counts = _fuzz(party_key_path(session / "parties", 1).read_bytes(), key, load, 2)
    assert counts["refused"] > INPUTS // 2


def test_epsilon_file(scratch: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rng = np.random.default_rng(0)
    counts = _fuzz(b"# per party\n0.5\n1.0, 0.001\n2\n", scratch / "eps.txt",
                   lambda path: parse_mechanisms(str(path), 0.0, 3, rng), 3)
    capsys.readouterr()  # the no-privacy warnings of loaded files with inf
    assert counts["loaded"] > 0 and counts["refused"] > 0


def test_dataset_csv(scratch: Path) -> None:
    counts = _fuzz(b"party,billA,billB\np0,1,0\np1,y,?\np2,n,1\n", scratch / "votes.csv",
                   lambda path: load_dataset(str(path)), 4)
    assert counts["loaded"] > 0 and counts["refused"] > 0


def test_toml_config(scratch: Path) -> None:
    parser = build_parser()
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    compose = sub.choices["compose"]
    counts = _fuzz(b"epsilon = 0.5\ndelta-slack = 1e-6\nk = 3\n", scratch / "run.toml",
                   lambda path: apply_config(compose, ["compose", "--config", str(path)]), 5)
    assert counts["loaded"] > 0 and counts["refused"] > 0


def test_answer_records_note(scratch: Path) -> None:
    note = {"fuzz-1": [{"record": "/keys/answers-0.sqlite", "identity": "ab" * 16, "parties": [0, 1]}]}
    counts = _fuzz(json.dumps(note, indent=1).encode(), scratch / "answer-records.json", _read_note, 6)
    assert counts["loaded"] > 0 and counts["refused"] > 0
