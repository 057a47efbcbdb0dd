"""``mpdp.accuracy`` of ``sum`` under the error measures: exact values at small k against brute force, and
at 10^5 parties the estimates without sum's (k + 1) x (k + 1) measure (74.5 GiB; the average rule is the
posterior mean or median, mpdp.protocols.decision.error_rules): refused only by a time limit set below
them, with nothing allocated."""

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
def test_sum_of_100000_parties_is_estimated_without_its_table(measure) -> None:
    """The exact rule's estimate is vectors of k + 1 and the band's blocks (read as it is made), not the four
    (k + 1)^2 tables (329 GB before): under a 1 s time limit it is refused by time, one line naming both
    estimates, and nothing is allocated in a process capped at 6 GB. (The run itself is measured in
    docs/benchmarks.md, not here.)"""
    done = _limited("import sys; from mpdp.parties.cli.main import main; "
                    f"sys.exit(main(['accuracy', '--epsilon', '1*100000', '--function', 'sum', '--measure', "
                    f"'{measure}', '--time-limit', '1']))")
    assert done.returncode == 2 and done.stdout == "", done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("mpdp: error: no exact engine: the exact rule (100,000 parties, 100,001 outputs) "
                               "would take about ")
    exact = lines[0].split("would take about ", 1)[1].split(", over the 1 s time limit", 1)[0]
    seconds, memory = exact.split(" and ")
    assert memory.endswith(" MB") and float(memory[:-3]) < 500, exact  # not the band's ~9.5 GB
    assert seconds.endswith(" s") and 10 < float(seconds[:-2]) < 120, exact
    assert "; the Monte Carlo accuracy estimate (100,000 transcripts of 100,000 parties) would take about " in lines[0]


def test_the_api_refuses_the_same_with_its_cost_error() -> None:
    done = _limited("import mpdp\nfrom mpdp.protocols.errors import CostLimitError\n"
                    "try:\n    mpdp.accuracy('1*100000', 'sum', measure='squared-error', time_limit=1)\n"
                    "except CostLimitError as exc:\n    print(str(exc).split(':')[0])")
    assert done.returncode == 0 and done.stdout.strip() == "no exact engine", done.stderr
