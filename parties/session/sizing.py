"""The up-front cost check of a simulated session (``mpdp simulate``): refused before any process starts
when its estimate is over ``--time-limit`` (default :data:`SESSION_TIME_LIMIT`: a live run is expected to take
minutes) or over the memory this machine can give now (:func:`mpdp.protocols.numerics.cost.memory_limit`; not
checked when the parties' workers run on a Dask cluster: their memory is the cluster's).

The estimate is :func:`mpdp.parties.session.estimate.estimate_run`'s (the one a large run prints): CPU work linear
in the parties' set-up and answers, by how they connect (``per-party`` / ``per-worker``), over the CPU this
machine gives the run now. With party decisions, :func:`party_decisions_cost` is checked beside it: the parties'
rules (:func:`mpdp.protocols.decision.engine_cost.party_rules_cost`) built in every worker process and in the
observer's evaluation.
"""

from __future__ import annotations

from collections.abc import Sequence

from mpdp.parties.session.estimate import Machine, estimate_run
from mpdp.protocols.decision.engine_cost import party_rules_cost
from mpdp.protocols.functions import BooleanFunction
from mpdp.protocols.numerics.cost import CostEstimate, format_bytes, noun
from mpdp.protocols.randomization.mechanisms import RandomizedResponse

__all__ = ["EVALUATION_BUILDS", "SESSION_TIME_LIMIT", "party_decisions_cost", "party_decisions_wait", "session_cost"]

#: Default seconds a simulated session may be estimated to take (``mpdp simulate --time-limit``).
SESSION_TIME_LIMIT = 1800.0
#: Builds of the parties' rules the observer's evaluation costs, besides one a worker (:func:`party_decisions_cost`).
EVALUATION_BUILDS = 2


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


def party_decisions_cost(mechanisms: Sequence[RandomizedResponse], function: BooleanFunction, repetitions: int,
                         rounds: int, workers: int, session_bytes: float = 0.0, kind: str = "average") -> CostEstimate:
    """The parties' own decisions of a session (``party_decisions``): every worker process builds the parties'
    rules and decides each round's transcript (:func:`mpdp.protocols.decision.engine_cost.party_rules_cost`, all
    ``mechanisms`` taking part: an upper bound), the workers at once (their memory adds up), and the observer's
    evaluation builds them once more after the rounds and each group rule's likelihoods once for its three
    evaluations (its accuracy on x for own bit 0 and 1, its optimized accuracy; costed as a build): CPU seconds
    ``(workers + 2) x`` one process's (``bench_party_rules.py``, majority at epsilon 1, one process deciding and
    evaluating: 20,000 parties 12.0 CPU-s against 15.8 estimated, 100,000 179 against 160, peak 8.3 GB against
    8.9 GB; load 5-6, 2026-12-03), peak memory ``workers x`` one process's, beside ``session_bytes`` (the session's own peak,
    :func:`session_cost`: they are resident together). ``kind``: the parties' rules, ``average`` or ``worst-case``.

    Raises:
        SizeLimitError: worst-case rules the rule factory would refuse (as :func:`party_rules_cost`)."""
    one = party_rules_cost(mechanisms, function, repetitions, rounds, kind)
    beside = f", beside the session's {format_bytes(session_bytes)}" if session_bytes else ""
    return CostEstimate(one.task, f"{one.size}; in {workers} {noun(workers, 'worker')} and the observer{beside}",
                        one.seconds * (workers + EVALUATION_BUILDS), one.memory_bytes * workers + session_bytes,
                        f"{one.alternative}, or fewer workers (workers=W: each holds the rules)")


def party_decisions_wait(cost: CostEstimate, workers: int, machine: Machine) -> float:
    """Seconds to allow for the parties' decisions of ``cost`` (:func:`party_decisions_cost` of ``workers``
    workers) on ``machine``: its CPU seconds (the workers' builds at once and, as room for the transcript's parts
    handed to every party and their signed decisions, the evaluation's builds) times the machine's speed, on the
    cores ``workers`` busy processes get beside the load (:meth:`Machine.share`). The observer waits that long
    (with its margin) after the round's own time: the unscaled wait ran out at 10^5 parties x 200 repetitions,
    one worker, load 11 on 2 cores (every decision missing after 784 s). A long wait costs only when decisions
    are lost; the observer stops once every decision arrived."""
    return cost.seconds * machine.speed * workers / machine.share(workers)
