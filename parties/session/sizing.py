"""The up-front cost check of a simulated session (``mpdp simulate``): refused before any process starts
when its estimate is over ``--time-limit`` (default :data:`SESSION_TIME_LIMIT`: a live run is expected to take
minutes) or over the memory this machine can give now (:func:`mpdp.protocols.numerics.cost.memory_limit`; not
checked when the parties' workers run on a Dask cluster: their memory is the cluster's).

The estimate is :func:`mpdp.parties.session.estimate.estimate_run`'s (the one a large run prints): CPU work linear
in the parties' set-up and answers, by how they connect (``per-party`` / ``per-worker``), over the CPU this
machine gives the run now.
"""

from __future__ import annotations

from mpdp.parties.session.estimate import Machine, estimate_run
from mpdp.protocols.numerics.cost import CostEstimate, noun

__all__ = ["SESSION_TIME_LIMIT", "session_cost"]

#: Default seconds a simulated session may be estimated to take (``mpdp simulate --time-limit``).
SESSION_TIME_LIMIT = 1800.0


def session_cost(parties: int, rounds: int, repetitions: int = 1, connections: str = "per-party", *,
                 machine: Machine | None = None) -> CostEstimate:
    """The estimated time and memory of a simulated session of ``parties`` parties, ``rounds`` rounds of
    ``repetitions`` symbols, the parties connected ``per-party`` or ``per-worker``, on ``machine`` (None: this machine now,
    :meth:`Machine.now`).

    Raises:
        ParameterError: as :func:`mpdp.parties.session.estimate.estimate_run`.
    """
    estimate = estimate_run(parties, rounds, repetitions, connections, machine=machine)
    lighter = "connections='per-worker', " if connections == "per-party" else ""  # only what would change the run
    fewer = "fewer parties (a symmetric function's exact accuracy needs no session: `mpdp accuracy`)"
    spread = "the parties' workers on more machines (executor='dask://HOST:PORT')"
    return CostEstimate("the simulated session", f"{parties:,} {noun(parties, 'party', 'parties')} x {rounds:,} {noun(rounds, 'round')}", estimate.seconds,
                        estimate.peak_bytes,
                        f"{fewer}, fewer rounds, {lighter}{spread}, or allow more time (time_limit=SECONDS)",
                        f"{fewer}, {lighter}or {spread}")
