"""Dataset loading: the shipped House votes, generic CSVs, random bits."""

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

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
    with pytest.raises(DatasetError, match="house-votes-84 or a CSV file path \\(no such file: .*nope.csv\\)"):
        load_dataset(str(tmp_path / "nope.csv"))
    (tmp_path / "votes.csv").mkdir()
    with pytest.raises(DatasetError, match="\\(a folder: .*votes.csv\\)"):
        load_dataset(str(tmp_path / "votes.csv"))


def test_a_dataset_that_is_no_name_or_path_is_named() -> None:
    """``mpdp.simulate(dataset=123)``/``mpdp.sweep(dataset=123)`` reach here: a named error, not a TypeError."""
    with pytest.raises(DatasetError, match="dataset=123 is not allowed: a dataset name \\(house-votes-84\\) or"):
        load_dataset(123)  # type: ignore[arg-type]


def test_random_dataset_is_seeded() -> None:
    a = random_dataset(7, 3, np.random.default_rng(1))
    b = random_dataset(7, 3, np.random.default_rng(1))
    np.testing.assert_array_equal(a.bits, b.bits)
    with pytest.raises(ParameterError, match="^parties=0"):
        random_dataset(0, 3, np.random.default_rng(1))


def test_dataset_row_width_message(tmp_path) -> None:
    path = tmp_path / "data.csv"
    path.write_text("1,0\n1,0,1\n")
    with pytest.raises(ParameterError) as info:
        load_dataset(str(path))
    assert str(info.value) == f"{path}: line 2 has 3 cells, the first row has 2"


def test_a_typo_in_column_1_is_refused_not_taken_for_labels() -> None:  # issue 10, item 3
    # the text cell is named with its line, and the first line with a vote in column 1
    with pytest.raises(DatasetError, match=r"column 1='2 \(line 3\)'.*line 1 has the vote '1'.*--label-column"):
        parse_csv("1,0\n1,1\n2,0\n", "typo.csv")
    with pytest.raises(DatasetError, match=r"line 3, column 1='2'"):
        parse_csv("1,0\n1,1\n2,0\n", "typo.csv", label_column=False)
    data = parse_csv("1,0\n1,1\n2,0\n", "ids.csv", label_column=True)  # said explicitly: labels
    assert data.labels == ("1", "1", "2") and data.bits.tolist() == [[0], [1], [0]]


def test_a_byte_order_mark_is_skipped(tmp_path) -> None:
    path = tmp_path / "bom.csv"
    path.write_bytes(b"\xef\xbb\xbf1,0\n1,1\n0,0\n")  # Excel's "CSV UTF-8", no header
    data = load_dataset(str(path))
    assert data.bits.tolist() == [[1, 0], [1, 1], [0, 0]] and data.round_names == ("round-1", "round-2")
    path.write_bytes("\ufeffparty,bill a\np0,1\np1,?\n".encode())
    data = load_dataset(str(path))
    assert data.labels == ("p0", "p1") and data.round_names == ("bill a",)
    assert data.bits.tolist() == [[1], [ABSENT]]


def test_the_header_is_a_row_of_names() -> None:
    data = parse_csv("bill a\n1\n0\n", "one.csv")  # one column: its header is not a label
    assert data.round_names == ("bill a",) and data.bits.tolist() == [[1], [0]]
    with pytest.raises(DatasetError, match=r"line 1.*mixes the name '0x' with the vote '1'"):
        parse_csv("1,0x\n1,1\n", "typo.csv")  # a typo in the first row does not make it a header
    with pytest.raises(DatasetError, match="the header has 2 cells, the data rows have 3"):
        parse_csv("a,b\n1,0,1\n", "short.csv")


@given(bits=hnp.arrays(np.int8, hnp.array_shapes(min_dims=2, max_dims=2, max_side=6), elements=st.sampled_from([0, 1, -1])),
       header=st.booleans(), labels=st.booleans(), bom=st.booleans())
def test_every_bit_matrix_reads_back(bits: np.ndarray, header: bool, labels: bool, bom: bool) -> None:
    k, r = bits.shape
    cell = {1: "1", 0: "n", -1: "?"}
    rows = [([f"party {i}"] if labels else []) + [cell[int(b)] for b in bits[i]] for i in range(k)]
    if header:
        rows.insert(0, (["party"] if labels else []) + [f"bill {j}" for j in range(r)])
    text = ("\ufeff" if bom else "") + "\n".join(",".join(row) for row in rows) + "\n"
    if not header and all((bits[i] == -1).all() for i in range(k)):
        return  # every cell "?": no row says anything, like an empty file
    data = parse_csv(text, "prop.csv")
    assert data.bits.tolist() == bits.tolist()
    assert data.labels == (tuple(f"party {i}" for i in range(k)) if labels else ("",) * k)
    assert data.round_names == tuple(f"bill {j}" if header else f"round-{j + 1}" for j in range(r))


def test_repeated_round_names_and_other_separators_are_refused_by_name(tmp_path: Path) -> None:
    path = tmp_path / "votes.csv"
    path.write_text("party,billA,billB,billA\np0,1,0,1\np1,0,0,1\n")
    with pytest.raises(DatasetError, match=r"the header names round 'billA' more than once"):
        load_dataset(str(path))
    for separator, named in ((";", "semicolon ';'"), ("\t", "tab")):
        path.write_text(separator.join(["party", "a", "b"]) + "\n" + separator.join(["p0", "1", "0"]) + "\n")
        with pytest.raises(DatasetError, match=f"separated by a {named}, not commas"):
            load_dataset(str(path))
    path.write_text("1;0\n")  # one line too, no header
    with pytest.raises(DatasetError, match="semicolon"):
        load_dataset(str(path))


def test_a_file_that_is_not_utf8_is_one_error_and_a_bom_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "votes.csv"
    path.write_bytes("party,bill\np0,1\n".encode("utf-16"))
    with pytest.raises(DatasetError, match=r"^dataset=.* in UTF-8 \(byte 0 is 0xff"):
        load_dataset(str(path))
    path.write_bytes(b"\xef\xbb\xbfparty,bill\np0,1\n")
    assert load_dataset(str(path)).round_names == ("bill",)
