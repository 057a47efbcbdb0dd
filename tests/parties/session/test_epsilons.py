"""parties.session.epsilons: --epsilon E|LO:HI|FILE and --delta."""

import math

import numpy as np
import pytest

from mpdp.parties.session.epsilons import canonical_epsilon_spec, parse_mechanisms
from mpdp.protocols import ParameterError, RandomizedResponse
from tests.parties.cli.invoke import refused


def test_single_value_and_inf() -> None:
    assert parse_mechanisms("0.5", 0.0, 3, np.random.default_rng(0)) == [RandomizedResponse(0.5)] * 3
    assert parse_mechanisms("inf", 0.1, 1, np.random.default_rng(0))[0].epsilon == math.inf


def test_range_is_reproducible_and_inside() -> None:
    a = parse_mechanisms("0.5:2", 0.0, 50, np.random.default_rng(4))
    b = parse_mechanisms("0.5:2", 0.0, 50, np.random.default_rng(4))
    assert a == b and all(0.5 <= m.epsilon <= 2 for m in a) and len({m.epsilon for m in a}) == 50


def test_file(tmp_path) -> None:
    path = tmp_path / "eps.txt"
    path.write_text("# per party\n1.0\n0.5, 0.01\n")
    mechs = parse_mechanisms(str(path), 0.0, 2, np.random.default_rng(0))
    assert mechs == [RandomizedResponse(1.0), RandomizedResponse(0.5, 0.01)]
    with pytest.raises(ParameterError, match="3, one per party"):
        parse_mechanisms(str(path), 0.0, 3, np.random.default_rng(0))


@pytest.mark.parametrize("spec, delta, match", [
    ("-1", 0.0, "^epsilon="), ("nan", 0.0, "^epsilon="), ("2:1", 0.0, "LO:HI"),
    ("abc", 0.0, "^epsilon="), ("1", 1.0, "^delta="), ("1", -0.5, "^delta="),
])
def test_bad_values(spec: str, delta: float, match: str) -> None:
    with pytest.raises(ParameterError, match=match):
        parse_mechanisms(spec, delta, 4, np.random.default_rng(0))


def test_a_binary_epsilon_file_is_a_one_line_error(tmp_path, capsys) -> None:
    binary = tmp_path / "bin.txt"
    binary.write_bytes(bytes(range(256)) * 4)
    line = refused(capsys, "simulate", "--broker", "mqtt://127.0.0.1:9", "--parties", "5", "--epsilon", str(binary))
    assert "UTF-8" in line


def test_an_epsilon_file_with_a_byte_order_mark_is_read(tmp_path) -> None:
    path = tmp_path / "eps.txt"
    path.write_bytes(b"\xef\xbb\xbf0.5\n1.0,0.001\n")  # as a spreadsheet program saves "UTF-8 with BOM"
    mechs = parse_mechanisms(str(path), 0.0, 2, np.random.default_rng(0))
    assert mechs == [RandomizedResponse(0.5), RandomizedResponse(1.0, 0.001)]


@pytest.mark.parametrize(("spellings", "canonical"), [
    (["1", "1.0", "1.00", "1e0", "+1", "10e-1"], "1.0"),
    (["0.5:2", "0.50:2.0", "5e-1:2e0"], "0.5:2.0"),
    (["inf", "Inf", "infinity"], "inf"),
    (["0", "0.0", "-0"], "0.0"),
])
def test_spellings_of_one_epsilon_have_one_canonical_form(spellings: list[str], canonical: str) -> None:
    """What a resumed run compares (issue: --epsilon 1 against a recorded 1.0 was a changed input)."""
    assert {canonical_epsilon_spec(s) for s in spellings} == {canonical}
    assert canonical_epsilon_spec("2") != canonical_epsilon_spec("1") and canonical_epsilon_spec("1:2") == "1.0:2.0"


def test_canonical_epsilon_keeps_a_files_path_and_other_text_as_given(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "1.00").write_text("1\n")  # a file wins over the number, as the run reads it
    assert canonical_epsilon_spec("1.00") == "1.00" and canonical_epsilon_spec("1e0") == "1.0"
    assert canonical_epsilon_spec("per party (see parties)") == "per party (see parties)"
    assert canonical_epsilon_spec("2:1") == "2:1"  # not a valid range: compared as written
