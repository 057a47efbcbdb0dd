"""A text ``epsilon=`` of ``mpdp.accuracy``/``estimate``/``compose`` is read as ``--epsilon`` is
(``"0.5,1"``, ``"1*3"``), never as a sequence of characters; a text that is no such list is refused in
one line naming ``epsilon=``."""

from __future__ import annotations

import math
import re

import pytest

import mpdp
from mpdp.protocols.errors import ParameterError
from tests.parties.cli.invoke import ok


def _rr(eps: float) -> float:
    """One party's randomized response: Pr[report = bit] = e^eps / (1 + e^eps) (002 eq. 1)."""
    return 1.0 / (1.0 + math.exp(-eps))


def _body(document: dict) -> dict:
    return {key: value for key, value in document.items() if key not in ("inputs", "seconds")}


@pytest.mark.parametrize(("text", "eps"), [("12", 12.0), ("0.5", 0.5)])
def test_accuracy_reads_one_number(text: str, eps: float) -> None:
    r = mpdp.accuracy(epsilon=text, function="majority")
    assert r.document["k"] == 1  # "12" is one party with epsilon 12, not parties 1 and 2
    assert r.average_accuracy() == pytest.approx(_rr(eps), rel=1e-12)


@pytest.mark.parametrize(("text", "values"), [("1*3", [1.0, 1.0, 1.0]), ("0.5,1", [0.5, 1.0])])
def test_accuracy_reads_a_list(text: str, values: list[float]) -> None:
    r = mpdp.accuracy(epsilon=text, function="majority")
    assert r.document["k"] == len(values) and r.document["inputs"]["epsilon"] == text
    assert _body(r.to_dict()) == _body(mpdp.accuracy(epsilon=values, function="majority").to_dict())


@pytest.mark.parametrize(("text", "eps"), [("12", 12.0), ("0.5", 0.5)])
def test_estimate_reads_one_number(text: str, eps: float) -> None:
    # seeded; the 99% Hoeffding interval of 20,000 samples covers the closed form
    r = mpdp.estimate(epsilon=text, function="majority", samples=20_000, seed=3, confidence=0.99)
    assert r.document["k"] == 1 and r.ci_low <= _rr(eps) <= r.ci_high


@pytest.mark.parametrize(("text", "values"), [("1*3", [1.0, 1.0, 1.0]), ("0.5,1", [0.5, 1.0])])
def test_estimate_reads_a_list(text: str, values: list[float]) -> None:
    r = mpdp.estimate(epsilon=text, function="majority", samples=2_000, seed=5)
    same = mpdp.estimate(epsilon=values, function="majority", samples=2_000, seed=5)
    assert r.document["k"] == len(values) and _body(r.to_dict()) == _body(same.to_dict())


@pytest.mark.parametrize(("text", "eps"), [("12", 12.0), ("0.5", 0.5)])
def test_compose_reads_one_number(text: str, eps: float) -> None:
    c = mpdp.compose(epsilon=text, delta=0.0, k=3)
    assert c.epsilons == (eps,) and c.document["k"] == 3
    assert c.epsilon_tilde == mpdp.compose(epsilon=eps, delta=0.0, k=3).epsilon_tilde
    assert c.document["bounds"]["basic"] == pytest.approx(3 * eps, rel=1e-12)  # 000 Theorem 3.1: k * epsilon


@pytest.mark.parametrize(("text", "values"), [("1*3", (1.0, 1.0, 1.0)), ("0.5,1", (0.5, 1.0))])
def test_compose_reads_a_list(text: str, values: tuple[float, ...], capsys: pytest.CaptureFixture[str]) -> None:
    c = mpdp.compose(epsilon=text, delta="0")
    assert c.epsilons == values and c.document["bounds"]["basic"] == pytest.approx(sum(values), rel=1e-12)
    assert _body(c.to_dict()) == _body(mpdp.compose(epsilon=list(values), delta=0.0).to_dict())
    assert _body(c.to_dict()) == _body(ok(capsys, "compose", "--epsilon", text, "--json"))  # as the CLI reads it


@pytest.mark.parametrize("call", [
    lambda e: mpdp.accuracy(epsilon=e, function="majority"),
    lambda e: mpdp.estimate(epsilon=e, function="majority", samples=100, seed=1),
    lambda e: mpdp.compose(epsilon=e, delta=0.0, k=3),
])
@pytest.mark.parametrize("text", ["0.5:2", "abc", "1,,2", "1*0"])
def test_a_bad_text_is_refused_naming_epsilon(call, text: str) -> None:
    with pytest.raises(ParameterError, match=rf"^epsilon={re.escape(repr(text))} is not allowed: [^\n]+$"):
        call(text)
