"""``mpdp.sweep(..., live=True)``: sweep points measured by live sessions over a real mosquitto (one broker for
the sweep), their verdicts against the exact theory (alpha = 0.05 family-wise), the same points for the same
seed, the curator protocol live, and the refusals of what a live sweep cannot do."""

from __future__ import annotations

import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

import mpdp
from mpdp.analysis.sweeps.sweep import plan_sweep, sweep
from mpdp.broker.endpoint import BrokerEndpoint
from mpdp.parties.api.schemas import validate_document
from mpdp.parties.session.estimate import estimate_run
from mpdp.parties.session.live_sweep import estimate_live_sweep, session_seed
from mpdp.protocols.colorings.majority_mechanism import central_mechanism
from mpdp.protocols.errors import ParameterError, WorkerError
from tests.calibration import scaled

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]


def test_a_live_sweep_on_its_own_mosquitto_child_with_the_runs_login(mosquitto: BrokerEndpoint) -> None:
    """The default broker of a live sweep is a mosquitto child with a random login (no anonymous clients):
    each point's session reaches it with that login, and gets the same points as over an external broker."""
    kwargs = dict(parties=4, rule="worst-case", samples=12, seed=9, live=True, workers=1)
    own = mpdp.sweep([1.0], broker="mosquitto", **kwargs).to_dict()
    external = mpdp.sweep([1.0], broker=mosquitto.url, **kwargs).to_dict()
    assert own["points"] == external["points"] and len(own["points"]) == 2


@pytest.mark.slow
def test_three_epsilons_live_are_consistent_with_theory(mosquitto: BrokerEndpoint) -> None:
    """k = 5, the central observer's average rule, 120 rounds a point: every verdict consistent at alpha = 0.05
    (Bonferroni over the 3 points), the theory that of the Monte Carlo sweep of the same grid."""
    grid = [0.3, 1.0, 2.5]
    r = mpdp.sweep(grid, parties=5, rule="average", observer="central", samples=120, seed=4, live=True,
                   broker=mosquitto.url, workers=1)
    doc = r.to_dict()
    validate_document(doc)
    assert doc["source"] == "live" and doc["inputs"]["broker"] == "external" and r.result.source == "live"
    monte_carlo = sweep(grid, parties=5, rule="average", observer="central", samples=1000, seed=4)
    assert [p["theoretical_accuracy"] for p in doc["points"]] == [p.theoretical_accuracy for p in monte_carlo.points]
    for point in r.result.points:
        assert point.samples == 120 and point.successes == round(point.empirical_accuracy * 120)
        assert point.ci_low <= point.empirical_accuracy <= point.ci_high
        assert point.consistent == (point.p_value >= 0.05 / 3)
        assert point.curator_accuracy is not None and point.curator_accuracy > point.theoretical_accuracy
    assert r.consistent
    # the accuracy grows with epsilon far beyond the noise at 120 rounds: 0.55 at 0.3 against 0.89 at 2.5
    assert r.result.points[0].successes < r.result.points[2].successes


@pytest.mark.slow
def test_same_seed_same_live_points(mosquitto: BrokerEndpoint) -> None:
    """The worst-case rule decides at random (seeded), party 0 decides too: the same seed repeats every
    point's count exactly, over sessions with fresh ids and fresh worker processes."""
    kwargs = dict(parties=4, rule="worst-case", samples=12, seed=9, live=True, broker=mosquitto.url, workers=1)
    first = mpdp.sweep([1.0], **kwargs).to_dict()
    again = mpdp.sweep([1.0], **kwargs).to_dict()
    assert first["points"] == again["points"] and len(first["points"]) == 2
    assert [p["observer"] for p in first["points"]] == ["central", "party 0"]
    assert all(0 <= p["successes"] <= 12 for p in first["points"])


@pytest.mark.slow
def test_the_curator_live_releases_any_binary_function(mosquitto: BrokerEndpoint) -> None:
    """--protocol curator --live with xor and threshold:2 (k = 5): the live curator releases what the Monte
    Carlo curator samples, central_mechanism's average-optimal mechanism; each point consistent with its
    exact accuracy (alpha = 0.05 family-wise, seeded)."""
    r = mpdp.sweep([1.0], parties=5, protocol="curator", function=["xor", "threshold:2"], samples=40, seed=4,
                   live=True, broker=mosquitto.url, workers=1)
    assert [p.function for p in r.result.points] == ["xor", "threshold:2"]
    for point in r.result.points:
        exact = central_mechanism(point.function, 5, 1.0, 0.0).average_accuracy()
        assert point.theoretical_accuracy == point.curator_accuracy == pytest.approx(exact, abs=1e-12)
    assert r.consistent


@pytest.mark.slow
def test_the_curator_live(mosquitto: BrokerEndpoint) -> None:
    """--protocol curator live: the curator's releases against its exact accuracy (001's optimal central
    mechanism, the curve of the rr points)."""
    r = mpdp.sweep([0.5, 2.0], parties=5, protocol="curator", samples=80, seed=1, live=True,
                   broker=mosquitto.url, workers=1)
    rr = sweep([0.5, 2.0], parties=5, rule="average", observer="central", samples=10, seed=1)
    for point, theory in zip(r.result.points, rr.points):
        assert (point.rule, point.observer) == ("curator", "central")
        assert point.theoretical_accuracy == point.curator_accuracy == theory.curator_accuracy
    assert r.consistent and r.document["inputs"]["protocol"] == "curator"


@pytest.mark.slow
def test_a_round_closed_with_parties_unheard_stops_the_sweep(mosquitto: BrokerEndpoint) -> None:
    """A round timeout far below a message's round trip: the rounds close before the parties are heard, so
    their decisions are not the k-party rule's and the sweep refuses to count them."""
    with pytest.raises(WorkerError, match="closed with parties unheard"):
        mpdp.sweep([1.0], parties=3, rule="average", observer="central", samples=2, seed=1, live=True,
                   broker=mosquitto.url, workers=1, round_timeout=1e-6)


def test_a_live_sweep_at_a_script_top_level_is_refused_before_anything_starts(tmp_path: Path) -> None:
    """Spawned workers re-import the main script: without a ``__main__`` guard the sweep is refused with one
    line, before any broker or process (the broker named here does not even exist)."""
    script = tmp_path / "script.py"
    script.write_text("import mpdp\nmpdp.sweep([1.0], parties=3, samples=2, live=True, broker='mqtt://127.0.0.1:9')\n"
                      "print('done')\n")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=scaled(100), cwd=tmp_path)
    last = done.stderr.strip().splitlines()[-1]
    assert done.returncode == 1 and "done" not in done.stdout
    assert "UnguardedMainError: mpdp.sweep starts worker processes" in last and "line 2" in last


def test_the_estimate_is_the_sum_of_the_sessions() -> None:
    plan = plan_sweep([0.5, 1.0], parties=(3, 9), rule="average", observer="central", samples=50)
    got = estimate_live_sweep(plan)
    assert got.seconds == pytest.approx(2 * estimate_run(3, 50, 1).seconds + 2 * estimate_run(9, 50, 1).seconds)
    assert got.peak_bytes == estimate_run(9, 50, 1).peak_bytes


def test_each_point_has_its_own_session_seed() -> None:
    plan = plan_sweep([0.5, 1.0, 2.0], parties=3, rule="average", observer="central", samples=5, seed=2)
    seeds = [session_seed(s) for s in plan.seeds]
    assert len(set(seeds)) == 3 and all(0 <= s < 2**63 for s in seeds)
    again = plan_sweep([0.5, 1.0, 2.0], parties=3, rule="average", observer="central", samples=5, seed=2)
    assert [session_seed(s) for s in again.seeds] == seeds
    assert seeds[0] == int(np.random.SeedSequence(2).spawn(3)[0].generate_state(1, np.uint64)[0]) >> 1


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"live": True, "executor": "pool"}, "one after another"),
    ({"broker": "embedded"}, "without live=True"),
    ({"workers": 2}, "without live=True"),
    ({"live": True, "workers": 0}, "workers"),
    ({"live": True, "round_timeout": 0.0}, "round_timeout"),
    ({"protocol": "curator", "rule": "average"}, "protocol curator"),
    # one voter's sum is binary: the Monte Carlo curator samples it, the live one releases only CENTRAL_FUNCTIONS
    ({"protocol": "curator", "function": "sum", "parties": 1, "live": True}, "threshold:T for the curator "
     "protocol live"),
    ({"protocol": "curator", "function": "sum"}, "binary function"),
    ({"protocol": "mpc"}, "protocol"),
])
def test_what_a_live_sweep_cannot_do_is_refused(kwargs, match) -> None:
    with ThreadPoolExecutor(1) as pool:
        if kwargs.get("executor") == "pool":
            kwargs = {**kwargs, "executor": pool}
        with pytest.raises(ParameterError, match=match):
            mpdp.sweep([1.0], **{"parties": 3, "samples": 5, **kwargs})
