"""``mpdp simulate --function sum``: each round carries the debiased count of its transcripts (issue 12,
item 7), checked against the true bits and an exact enumeration of one transcript's distribution."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import binomtest

from mpdp.broker.endpoint import BrokerEndpoint
from mpdp.parties.cli.main import main

# party 2 has epsilon 0 (left out, flagged); party 4 the four-output mechanism (epsilon 1.5, delta 0.2)
EPSILONS = ["1.0", "0.7", "0", "2.0", "1.5,0.2", "1.0", "0.5"]
VOTES = np.array([[1, 0, 1], [1, 1, 0], [0, 1, 1], [1, 0, 0], [0, 1, 1], [1, 1, 0], [0, 0, 1]])
REPETITIONS, LEVEL = 400, 0.9


def _channel(spec: str) -> np.ndarray:
    """P(symbol | bit), rows bit 0/1, from the closed form (002 eq. (9); 000 §5.1 for four outputs)."""
    eps, *rest = (float(c) for c in spec.split(","))
    delta = rest[0] if rest else 0.0
    p, q = math.exp(eps) / (1 + math.exp(eps)), 1 / (1 + math.exp(eps))
    if not rest:
        return np.array([[p, q], [q, p]])
    keep = 1 - delta
    return np.array([[delta, keep * p, keep * q, 0.0], [0.0, keep * q, keep * p, delta]])


def _estimate(spec: str) -> np.ndarray:
    """The unbiased per-symbol estimate g of the bit, solved from E[g | x] = x (least norm for four outputs)."""
    m = _channel(spec)
    return np.linalg.lstsq(m, np.array([0.0, 1.0]), rcond=None)[0] if m.shape[1] == 2 else \
        np.array([0.0, *np.linalg.solve(m[:, 1:3], [0.0, 1.0] - m[:, [0, 3]] @ [0.0, 1.0]), 1.0])


def _exact_coverage(x: np.ndarray, half: float) -> float:
    """P(|one transcript's estimate - count| <= half | x) over every transcript of the informative parties."""
    informative = [i for i, e in enumerate(EPSILONS) if float(e.split(",")[0]) > 0]
    channels = [_channel(EPSILONS[i]) for i in informative]
    tables = [_estimate(EPSILONS[i]) for i in informative]
    truth = int(x[informative].sum())
    total = 0.0
    for tau in itertools.product(*[range(c.shape[1]) for c in channels]):
        prob = math.prod(c[x[i], t] for c, i, t in zip(channels, informative, tau))
        if abs(sum(g[t] for g, t in zip(tables, tau)) - truth) <= half + 1e-12:
            total += prob
    return total


@pytest.mark.integration
@pytest.mark.timeout(120)
def test_each_sum_round_carries_its_debiased_count(mosquitto: BrokerEndpoint, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    eps_file, votes, out = tmp_path / "eps.txt", tmp_path / "votes.csv", tmp_path / "r.json"
    eps_file.write_text("\n".join(EPSILONS) + "\n")
    votes.write_text("a,b,c\n" + "\n".join(",".join(map(str, row)) for row in VOTES) + "\n")
    assert main(["simulate", "--dataset", str(votes), "--epsilon", str(eps_file), "--function", "sum",
                 "--repetitions", str(REPETITIONS), "--seed", "12", "--alpha", str(1 - LEVEL),
                 "--json", str(out), "--workers", "1", "--broker", f"mqtt://127.0.0.1:{mosquitto.port}"]) == 0
    table = capsys.readouterr().out
    assert "debiased count [CI]" in table and "Left out (epsilon 0, or below 1e-154: no finite-variance estimate): parties 2." in table
    variance = sum(float(_estimate(e) ** 2 @ _channel(e)[0]) for e in EPSILONS if float(e.split(",")[0]) > 0)
    z = 1.6448536269514722  # the 95% normal quantile: a two-sided 90% interval
    for j, r in enumerate(json.loads(out.read_text())["rounds"]):
        d = r["debiased"]
        truth = int(VOTES[:, j].sum() - VOTES[2, j])  # the count over the included parties
        assert (d["excluded"], d["included"], d["true_count"], d["repetitions"]) == ([2], 6, truth, REPETITIONS)
        assert d["confidence"] == pytest.approx(LEVEL)
        assert d["transcript_standard_error"] == pytest.approx(math.sqrt(variance), rel=1e-12)
        assert d["standard_error"] == pytest.approx(math.sqrt(variance / REPETITIONS), rel=1e-12)
        low, high = d["interval"]
        assert high - low == pytest.approx(2 * z * d["standard_error"]) and d["covered"]
        assert low <= truth <= high  # unbiased: the pooled estimate lies within its interval of the count
        assert d["post_processed"]["clipped"] == min(max(round(d["estimate"]), 0), 6)
        exact = _exact_coverage(VOTES[:, j], z * math.sqrt(variance))
        measured = round(d["transcript_coverage"] * REPETITIONS)
        assert binomtest(measured, REPETITIONS, exact).pvalue > 0.001, (measured, exact)
