"""``mpdp.accuracy`` of ``sum`` under the error measures: exact values at small k against brute force, and
at 10^5 parties the cost estimates' one-line refusal, where the worst-case LP's estimate built sum's
(k + 1) x (k + 1) measure first (``_ArrayMemoryError: Unable to allocate 74.5 GiB``)."""

from __future__ import annotations

import itertools
import resource
import subprocess
import sys

import numpy as np
import pytest

import mpdp
from tests.protocols.brute import observer_values

EPSILONS = [0.5, 1.0, 1.5]


def _channel(epsilon: float) -> np.ndarray:
    """Randomized response's 2 x 2 channel: the truth with probability e^eps / (1 + e^eps) (002 eq. (9))."""
    p = np.exp(epsilon) / (1 + np.exp(epsilon))
    return np.array([[p, 1 - p], [1 - p, p]])


@pytest.mark.parametrize(("measure", "error"), [("squared-error", lambda d: -(d ** 2)),
                                                ("absolute-error", lambda d: -np.abs(d))])
@pytest.mark.parametrize("party", [None, 1])
@pytest.mark.parametrize("engine", ["general", "symmetric"])
def test_sum_under_an_error_measure_is_the_brute_force_optimum(measure, error, party, engine) -> None:
    """The average rule's average and worst case (002 eqs. (1), (3)) and the worst-case rule's LP optimum
    (eq. (6)), over all 2^3 inputs and transcripts."""
    k = len(EPSILONS)
    table = np.array([sum(x) for x in itertools.product([0, 1], repeat=k)])
    y = np.arange(k + 1)
    w = error((y[:, None] - y[None, :]).astype(np.float64))
    average, worst, lp = observer_values([_channel(e) for e in EPSILONS], table, w, party)
    doc = mpdp.accuracy(EPSILONS, "sum", measure=measure, party=party, engine=engine).to_dict()
    assert doc["engine"] == engine
    assert doc["rules"]["average"]["average_accuracy"] == pytest.approx(average, abs=1e-12)
    assert doc["rules"]["average"]["worst_case_accuracy"] == pytest.approx(worst, abs=1e-12)
    assert doc["rules"]["worst_case"]["worst_case_accuracy"] == pytest.approx(lp, abs=1e-7)


def _limited(code: str) -> subprocess.CompletedProcess[str]:
    """``code`` in a Python whose address space is capped at 6 GB: sum's measure at 10^5 parties (80 GB)
    fails there at once instead of swapping the machine."""
    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (6 << 30, 6 << 30))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                          preexec_fn=cap, check=False)


@pytest.mark.parametrize("measure", ["squared-error", "absolute-error"])
def test_sum_of_100000_parties_is_refused_by_its_estimates_before_any_table(measure) -> None:
    """As ``--measure zero-one``: no exact engine (the exact rule's k^3) and the Monte Carlo fallback over
    its time and memory, one line naming both estimates, nothing allocated."""
    done = _limited("import sys; from mpdp.parties.cli.main import main; "
                    f"sys.exit(main(['accuracy', '--epsilon', '1*100000', '--function', 'sum', '--measure', '{measure}']))")
    assert done.returncode == 2 and done.stdout == "", done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("mpdp: error: no exact engine: the exact rule (100,000 parties, 100,001 outputs) "
                               "would take about 7.8 h and 329 GB, over ")
    assert "; the Monte Carlo accuracy estimate (100,000 transcripts of 100,000 parties) would take about 28 days " \
           "and 160 GB, over " in lines[0]
    assert lines[0].endswith("or more time (--time-limit SECONDS)")


def test_the_api_refuses_the_same_with_its_cost_error() -> None:
    done = _limited("import mpdp\nfrom mpdp.protocols.errors import CostLimitError\n"
                    "try:\n    mpdp.accuracy('1*100000', 'sum', measure='squared-error')\n"
                    "except CostLimitError as exc:\n    print(str(exc).split(':')[0])")
    assert done.returncode == 0 and done.stdout.strip() == "no exact engine", done.stderr
