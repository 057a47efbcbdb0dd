"""Named functions, truth tables in itertools.product order, accuracy measures."""

import itertools

import numpy as np
import pytest

from mpdp.protocols import (
    ParameterError,
    SizeLimitError,
    TruthTable,
    accuracy_measure,
    parse_function,
)


def _brute(name: str, k: int) -> list[int]:
    rules = {
        "majority": lambda x: int(sum(x) > k / 2),
        "sum": sum,
        "xor": lambda x: sum(x) % 2,
        "and": lambda x: int(all(x)),
        "or": lambda x: int(any(x)),
        "threshold:2": lambda x: int(sum(x) >= 2),
    }
    return [rules[name](x) for x in itertools.product([0, 1], repeat=k)]


@pytest.mark.parametrize("name", ["majority", "sum", "xor", "and", "or", "threshold:2"])
@pytest.mark.parametrize("k", [1, 2, 3, 4, 5])
def test_truth_tables_follow_product_order(name: str, k: int) -> None:
    f = parse_function(name)
    np.testing.assert_array_equal(f.truth_table(k), _brute(name, k))
    assert f.output_size(k) == (k + 1 if name == "sum" else 2)


def test_passed_is_majority_and_ties_fail() -> None:
    f = parse_function("passed")
    assert f([1, 1, 0, 0]) == 0 and f([1, 1, 1, 0]) == 1 and f([1, 0, 1]) == 1


def test_table_function_and_party_zero_is_the_most_significant_bit() -> None:
    f = parse_function("table:0,0,0,1,1,1,1,1")  # x0 OR (x1 AND x2)
    assert f([1, 0, 0]) == 1 and f([0, 1, 1]) == 1 and f([0, 1, 0]) == 0
    assert f.output_size(3) == 2


@pytest.mark.parametrize("spec", ["median", "threshold:x", "threshold:-1", "table:1,2,3", "table:a"])
def test_bad_function_specs(spec: str) -> None:
    with pytest.raises(ParameterError):
        parse_function(spec)


@pytest.mark.parametrize("spec", ["threshold:x", "threshold:-1"])
def test_bad_threshold_names_the_function(spec: str) -> None:
    """It named ``threshold``, which ``mpdp simulate`` reads as its mpc option: "--threshold=1 is not allowed"."""
    with pytest.raises(ParameterError, match=f"function='{spec}' is not allowed: threshold:T"):
        parse_function(spec)


def test_table_with_wrong_k() -> None:
    with pytest.raises(ParameterError, match="k=3"):
        TruthTable((0, 1)).truth_table(3)


def test_truth_table_size_limit_names_the_alternative() -> None:
    with pytest.raises(SizeLimitError, match="symmetric"):
        parse_function("majority").truth_table(40)


def test_measures() -> None:
    np.testing.assert_array_equal(accuracy_measure("zero-one", 3), np.eye(3))
    np.testing.assert_array_equal(accuracy_measure("neg_abs", 3), [[0, -1, -2], [-1, 0, -1], [-2, -1, 0]])
    np.testing.assert_array_equal(accuracy_measure("squared-error", 3)[0], [0, -1, -4])
    with pytest.raises(ParameterError, match="measure"):
        accuracy_measure("hamming", 2)
