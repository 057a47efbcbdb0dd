"""``mpdp calibrate`` end to end through parties.cli.main."""

import pytest

from mpdp.analysis.privacy.calibration import corollary_4_1, per_query_budget_exact
from tests.parties.cli.invoke import ok, refused


def test_json(capsys: pytest.CaptureFixture[str]) -> None:
    out = ok(capsys, "calibrate", "--epsilon", "0.5", "--delta", "1e-5", "-k", "100", "--json")
    assert out["budgets"]["corollary_4_1"]["epsilon0"] == pytest.approx(corollary_4_1(0.5, 1e-5, 100).epsilon0)
    assert out["budgets"]["exact"]["epsilon0"] == pytest.approx(per_query_budget_exact(0.5, 1e-5, 100).epsilon0)
    mechanisms = {(n["mechanism"], n["budget"]) for n in out["noise"]}
    assert ("geometric", "exact_pure") in mechanisms and ("gaussian", "gaussian_exact") in mechanisms
    assert len(mechanisms) == len(out["noise"]) == 9


def test_text(capsys: pytest.CaptureFixture[str]) -> None:
    out = ok(capsys, "calibrate", "--epsilon", "1", "--delta", "1e-6", "-k", "16")
    assert "epsilon <= 0.9 only" in out and "geometric" in out and "exact_pure" in out


@pytest.mark.parametrize("argv, name", [(("--epsilon", "-1", "--delta", "1e-5", "-k", "3"), "epsilon"),
                                        (("--epsilon", "1", "--delta", "0", "-k", "3"), "delta"),
                                        (("--epsilon", "1", "--delta", "1e-5", "-k", "0"), "k")])
def test_refused(capsys: pytest.CaptureFixture[str], argv: tuple[str, ...], name: str) -> None:
    assert name in refused(capsys, "calibrate", *argv)
