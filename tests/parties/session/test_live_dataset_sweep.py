"""``mpdp.sweep(..., dataset=..., live=True)``: one live session per point over the dataset's rounds (its
absent member out of its round), per-round verdicts against the exact theory (alpha = 0.05 family-wise over
points x rounds), the same points for the same seed."""

from __future__ import annotations

import pytest

import mpdp
from mpdp.analysis.sweeps.dataset_sweep import dataset_sweep, plan_dataset_sweep
from mpdp.broker.endpoint import BrokerEndpoint
from mpdp.parties.api.schemas import validate_document
from mpdp.parties.session.datasets import load_dataset
from mpdp.parties.session.estimate import estimate_run
from mpdp.parties.session.live_sweep import estimate_live_sweep

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]

#: 5 members, 3 bills; E takes no part in b2.
TOY = "name,b1,b2,b3\nA,y,n,y\nB,y,y,n\nC,n,y,y\nD,y,n,n\nE,n,?,y\n"


@pytest.mark.slow
def test_a_live_dataset_sweep_is_consistent_and_repeats_with_its_seed(mosquitto: BrokerEndpoint, tmp_path) -> None:
    path = tmp_path / "toy.csv"
    path.write_text(TOY, encoding="utf-8")
    kwargs = dict(dataset=str(path), rule="average", samples=60, seed=3, live=True, broker=mosquitto.url, workers=1)
    r = mpdp.sweep([0.5, 2.0], **kwargs)
    doc = r.to_dict()
    validate_document(doc)
    assert doc["source"] == "live" and doc["inputs"]["participants"] == [5, 4, 5]
    monte_carlo = dataset_sweep([0.5, 2.0], load_dataset(str(path)).bits, ["b1", "b2", "b3"], dataset=str(path),
                                rule="average", samples=10, seed=3)
    for point, theory in zip(r.result.points, monte_carlo.points):
        assert point.theoretical_accuracy == theory.theoretical_accuracy
        assert point.samples == 3 * 60 and point.ci_low <= point.empirical_accuracy <= point.ci_high
    assert r.consistent
    assert mpdp.sweep([0.5, 2.0], **kwargs).to_dict()["points"] == doc["points"]


def test_the_estimate_of_a_live_dataset_sweep_counts_its_rounds_and_repetitions() -> None:
    data = load_dataset("house-votes-84")
    plan = plan_dataset_sweep([0.5, 1.0], data.bits, data.round_names, dataset=data.name, rule="average",
                              samples=50)
    assert estimate_live_sweep(plan).seconds == pytest.approx(2 * estimate_run(435, 16, 50).seconds)
