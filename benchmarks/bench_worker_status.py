"""The ready beacon of a party host of K parties (default 5,000): its cost at the observer and at the host.

A host repeats its signed "ready" each second until round 0 (:mod:`mpdp.parties.session.host`); each report
carries one Ed25519 signature per party (:class:`mpdp.broker.messages.WorkerStatus`). Prints, per report,
the path before and now, measured in the same run (best of 3):

* observer: parsing the report; building its K public key objects (PyNaCl ``VerifyKey``, what a cache of
  them would save); checking every signature (before, and still a worker's first "ready"); a repeat of a
  ready worker's report, checked for its first party only (the engine, now);
* host: signing a report with the raw private keys (before: each load derives the public key) and with the
  keys loaded once; the host's check of its own report with the public keys derived per check (before)
  and once.

Run: python benchmarks/bench_worker_status.py [K]
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

from mpdp.broker.messages import WorkerStatus
from mpdp.broker.signing import PrivateKey, generate_key_pair, load_private_key, load_public_key, public_key_of


def _best(fn: Callable[[], object], repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main(k: int) -> None:
    pairs = [generate_key_pair() for _ in range(k)]
    private = [p for p, _ in pairs]
    roster = [q for _, q in pairs]
    loaded = [load_private_key(p) for p in private]
    parties = tuple(range(k))

    def sign(keys: list[bytes] | list[PrivateKey]) -> WorkerStatus:
        return WorkerStatus.signed(keys, session="bench", worker=0, state="ready", parties=parties)

    status = sign(loaded)
    payload = status.model_dump_json()
    assert status.unsigned(roster) == []
    rows = [
        ("observer: parse one report", _best(lambda: WorkerStatus.model_validate_json(payload))),
        ("observer: build the report's public key objects", _best(lambda: [load_public_key(q) for q in roster])),
        ("observer: check every signature (before)", _best(lambda: status.unsigned(roster))),
        ("observer: a repeat of a ready worker's report, first signature (now)",
         _best(lambda: status.unsigned(roster, first=1))),
        ("host: sign one report, raw private keys (before)", _best(lambda: sign(private))),
        ("host: sign one report, keys loaded once (now)", _best(lambda: sign(loaded))),
        ("host: check its own report, public keys derived per check (before)",
         _best(lambda: status.unsigned(dict(zip(parties, map(public_key_of, private)))))),
        ("host: check its own report, public keys derived once (now)",
         _best(lambda: status.unsigned(dict(zip(parties, roster))))),
    ]
    width = max(len(name) for name, _ in rows)
    print(f"k = {k:,} parties, one report ({len(payload):,} bytes)")
    print(f"{'step':<{width}}  seconds")
    for name, seconds in rows:
        print(f"{name:<{width}}  {seconds:8.4f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5000)
