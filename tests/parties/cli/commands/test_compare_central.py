"""``mpdp compare-central`` end to end: the table, sizes refused up front, extreme epsilon, help."""

import pytest

from mpdp.parties.cli.main import main
from tests.parties.cli.commands.test_mechanism import refused_without_allocating
from tests.parties.cli.invoke import ok, refused


def test_compare_central_table(capsys) -> None:
    out = ok(capsys, "compare-central", "--voters", "1,3", "--epsilon", "1")
    assert "central avg" in out and len(out.strip().splitlines()) == 4


@pytest.mark.timeout(60)
def test_sizes_are_refused_up_front(capsys) -> None:
    line = refused_without_allocating(capsys, "compare-central", "--voters", "100000000", "--epsilon", "1")
    assert "at most 401" in line and "voters=" in line


@pytest.mark.parametrize("epsilon", ["1000", "1e200", "1e308", "inf"])
def test_compare_central_at_huge_epsilon(capsys, epsilon) -> None:
    rows = ok(capsys, "compare-central", "--voters", "1,2,3,4", "--epsilon", epsilon, "--json")["rows"]
    for row in rows:
        assert row["epsilon"] == ("inf" if epsilon == "inf" else float(epsilon))
        # odd k: both are exact; even k: a tie at k/2 the central mechanism breaks at random
        values = [row[key] for key in ("central_average", "central_worst", "distributed_average",
                                       "distributed_worst")]
        assert all(0.0 <= v <= 1.0 for v in values)
        if row["voters"] % 2:
            assert values == [1.0, 1.0, 1.0, 1.0]


def test_compare_central_help_has_examples(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["compare-central", "--help"])
    assert "examples:\n  mpdp compare-central --voters" in capsys.readouterr().out


def test_a_table_over_the_time_limit_is_refused_with_its_estimate(capsys) -> None:
    """Issue 10, item 5: --voters 401 ran silently for 30 s. The model (analysis.theory.central_vs_distributed.
    ROW_SECONDS) puts one row at k = 401 at 6 s: over a 1 s limit, refused before any work."""
    line = refused(capsys, "compare-central", "--voters", "401", "--epsilon", "1", "--time-limit", "1")
    assert "1 row up to k = 401" in line and "about 6 s" in line and "--time-limit" in line
    assert "time-limit" in refused(capsys, "compare-central", "--voters", "3", "--time-limit", "0")
