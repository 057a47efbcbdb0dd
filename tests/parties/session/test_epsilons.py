"""parties.session.epsilons: --epsilon E|LO:HI|FILE and --delta."""

import math

import numpy as np
import pytest

from mpdp.parties.session.epsilons import parse_mechanisms
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
