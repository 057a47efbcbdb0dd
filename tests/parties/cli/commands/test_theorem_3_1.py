"""``mpdp theorem-3-1`` end to end through parties.cli.main."""

import pathlib

import pytest

from tests.parties.cli.invoke import ok, refused


def test_json_margins(capsys: pytest.CaptureFixture[str]) -> None:
    out = ok(capsys, "theorem-3-1", "--parties", "2", "--trials", "8", "--seed", "5", "--json")
    assert out["trials"] == 8 and len(out["margins"]) == 8 and out["beaten"] == 0
    assert out["max_average_margin"] == max(m["average"] for m in out["margins"]) <= 1e-12
    again = ok(capsys, "theorem-3-1", "--parties", "2", "--trials", "8", "--seed", "5", "--json")
    assert again == out  # seeded


def test_text_and_plot(capsys: pytest.CaptureFixture[str], tmp_path: pathlib.Path) -> None:
    plot = tmp_path / "margins.svg"
    out = ok(capsys, "theorem-3-1", "--parties", "2", "--trials", "3", "--delta", "0.05", "--plot", str(plot))
    assert "beaten by more than 1e-12: 0 of 3" in out and plot.stat().st_size > 0


@pytest.mark.parametrize("argv, name", [(("--parties", "5"), "parties=5"), (("--trials", "0"), "trials=0"),
                                        (("--delta", "1"), "--delta")])
def test_refused(capsys: pytest.CaptureFixture[str], argv: tuple[str, ...], name: str) -> None:
    assert name in refused(capsys, "theorem-3-1", *argv)
