"""Curator and mpc ballots go through the round engine's double-release check like randomized response's answers:
the engine compares a second ballot of a closed round with :meth:`BallotStore.recorded_payload` (the ballot as
received), so the same bytes again are ``late`` and a different, validly signed ballot is a double release."""

from __future__ import annotations

from pathlib import Path

from mpdp.parties.ballots.store import BallotRows, BallotStore, RecordedBallot


def test_a_recorded_ballot_is_read_back_as_received(tmp_path: Path) -> None:
    sealed = '{"kind":"sealed","party":0,"ciphertext":"\\u00e9t\\u00e9 as received"}'
    abstained = '{"kind":"abstain","party":1,"reason":"policy"}'
    with BallotStore(tmp_path / "t.sqlite") as store:
        store.open_central_session("s", 3, 1, ["r0"], 1.0, 0.0, mode="simulation")
        rows = BallotRows((RecordedBallot(0, "sealed", None, sealed), RecordedBallot(1, "abstain", "policy", abstained),
                           RecordedBallot(2, "absent", None, None)), 1, '{"release":1}')
        with store.transaction() as db:
            rows.write(db, "s", 0, 0.0)
        assert store.recorded_payload("s", 0, 0) == sealed.encode("utf-8")
        assert store.recorded_payload("s", 0, 1) == abstained.encode("utf-8")
        assert store.recorded_payload("s", 0, 2) is None  # absent: nothing to compare with
        assert store.recorded_payload("s", 1, 0) is None and store.recorded_payload("other", 0, 0) is None
        assert store.record_double_release("s", 0, 0, b'{"kind":"sealed","party":0,"ciphertext":"fresh"}',
                                           released=True)
        assert store.double_releases("s", 0).tolist() == [0]
