"""Cost of ``mpdp audit`` at N = 10^6 outputs per input (one release), next to baselines of the same run.

Prints one table: the whole audit on the deployed path (CSPRNG sampler, 40 signed messages through the
observer's parser, the Clopper-Pearson certificate) and on the simulation path; the baseline is the bare
deployed sampler (``sample_secure`` of 2 x 10^6 draws, no wire): the audit's own overhead is the difference.
Run: python benchmarks/bench_audit.py
"""

from __future__ import annotations

import time

from mpdp.parties.rr.audit import audit_party
from mpdp.protocols.randomization.mechanisms import RandomizedResponse
from mpdp.protocols.randomization.secure import sample_secure

N = 10**6


def main() -> None:
    print("benchmark (N = 10^6 outputs per input, one release)           seconds")
    start = time.perf_counter()
    for bit in (0, 1):
        sample_secure(RandomizedResponse(1.0), bit, N)
    print(f"baseline: sample_secure, 2 x 10^6 draws, no wire                {time.perf_counter() - start:7.2f}")
    for path in ("deployed", "simulation"):
        run = audit_party(1.0, samples=N, party_path=path, seed=1)
        print(f"audit, {path:<10} path ({run.messages} messages, eps_lb {run.estimate.epsilon_lower_bound:.4f})"
              f"    {run.seconds:7.2f}")


if __name__ == "__main__":
    main()
