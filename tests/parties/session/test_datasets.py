"""Dataset loading: the shipped House votes, generic CSVs, random bits."""

import numpy as np
import pytest

from mpdp.parties.session.datasets import ABSENT, load_dataset, parse_csv, random_dataset
from mpdp.protocols import DatasetError, ParameterError

MISSING_PER_BILL = [12, 48, 11, 11, 15, 11, 14, 15, 22, 7, 21, 31, 25, 17, 28, 104]


def test_house_votes() -> None:
    data = load_dataset("house-votes-84")
    assert data.bits.shape == (435, 16)
    assert data.labels.count("democrat") == 267 and data.labels.count("republican") == 168
    assert list((data.bits == ABSENT).sum(axis=0)) == MISSING_PER_BILL
    assert data.round_names[0] == "handicapped-infants"
    assert data.participants(15).size == 435 - 104
    assert "CC BY 4.0" in data.source


def test_generic_csv_without_header_or_labels() -> None:
    data = parse_csv("1,0,?\n0,1,1\n", "inline")
    np.testing.assert_array_equal(data.bits, [[1, 0, ABSENT], [0, 1, 1]])
    assert data.round_names == ("round-1", "round-2", "round-3")


def test_csv_with_a_bad_value_names_row_column_and_value() -> None:
    with pytest.raises(DatasetError, match=r"line 3, b='maybe'"):
        parse_csv("name,a,b\nx,y,n\nz,n,maybe\n", "bad.csv")


def test_unknown_dataset(tmp_path) -> None:
    with pytest.raises(DatasetError, match="house-votes-84"):
        load_dataset(str(tmp_path / "nope.csv"))


def test_random_dataset_is_seeded() -> None:
    a = random_dataset(7, 3, np.random.default_rng(1))
    b = random_dataset(7, 3, np.random.default_rng(1))
    np.testing.assert_array_equal(a.bits, b.bits)
    with pytest.raises(ParameterError, match="--parties"):
        random_dataset(0, 3, np.random.default_rng(1))


def test_dataset_row_width_message(tmp_path) -> None:
    path = tmp_path / "data.csv"
    path.write_text("1,0\n1,0,1\n")
    with pytest.raises(ParameterError) as info:
        load_dataset(str(path))
    assert str(info.value) == f"{path}: line 2 has 3 cells, the first row has 2"
