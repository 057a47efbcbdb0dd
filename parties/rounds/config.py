"""What one end-to-end run is: :class:`RunConfig` (validated on construction), for every protocol."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from mpdp.analysis.privacy.accounting import Budget
from mpdp.broker.messages import MAX_REPETITIONS
from mpdp.broker.settings import BrokerSettings
from mpdp.broker.topics import check_session
from mpdp.parties.rounds.executor import check_executor
from mpdp.parties.rounds.privacy import DEFAULT_DELTA_SLACK, check_privacy_options
from mpdp.parties.rounds.registry import PROTOCOLS
from mpdp.parties.rounds.validator_count import check_validators
from mpdp.protocols.errors import ParameterError
from mpdp.protocols.functions import BooleanFunction
from mpdp.protocols.randomization.mechanisms import RandomizedResponse
from mpdp.protocols.rules.rules import RULE_KINDS, RuleFactory

__all__ = ["CONNECTION_CHOICES", "CONNECTIONS", "PROTOCOLS", "RunConfig", "default_workers"]

#: How a simulation's parties reach the broker: one connection each, or one per worker process.
CONNECTIONS: tuple[str, ...] = ("per-party", "per-worker")
#: What a user may ask for: ``auto`` (the default) is resolved by the session layer from the number of parties
#: (:func:`mpdp.parties.session.estimate.choose_connections`).
CONNECTION_CHOICES: tuple[str, ...] = ("auto", *CONNECTIONS)


def default_workers() -> int:
    """One worker process per core."""
    return max(1, os.cpu_count() or 1)


@dataclass(frozen=True, slots=True, eq=False)
class RunConfig:
    """One end-to-end run.

    Attributes:
        session: session id (topics ``mpdp/{session}/...``, the store key), ``[A-Za-z0-9_.-]{1,64}``.
        round_names: R names, one per round (a bill).
        bits: int8 (k, R): party i's private bit in round r, 0 or 1, or -1 (takes no part: abstains).
        mechanisms: k randomized responses (public).
        repetitions: independent releases per party and round (a simulation device), >= 1.
        seed: root seed of the simulation (None: OS entropy); ignored in deployment mode.
        function, measure: f and the accuracy measure w (|Y| x |Y|) of the decision rule.
        broker: where the broker is (:class:`mpdp.broker.settings.BrokerSettings`).
        workers: worker processes (at most k are used); None = :func:`default_workers`, one per core.
        store_path: the SQLite transcript store; None keeps the transcript in memory only.
        secure: deployment mode (parties sample with :mod:`mpdp.protocols.randomization.secure`).
        round_timeout: seconds without a new answer after which a round closes and the missing parties are
            recorded absent (the quiet time pauses while the observer cannot reach the broker).
        ready_timeout: seconds to wait for every worker to have its parties subscribed.
        decision_timeout: with ``party_rule``, seconds the observer waits after the last round for the parties'
            decisions; None = ``round_timeout`` (the session layer adds the parties' rules' estimated build).
        connect_concurrency: parties of one worker connecting at the same time, at most.
        connections: one of :data:`CONNECTION_CHOICES`: ``"auto"`` (per-party while cheap, else per-worker:
            :func:`mpdp.parties.session.estimate.choose_connections`), ``"per-party"`` (each party its own MQTT connection, as
            deployed) or ``"per-worker"`` (a worker serves its parties over one connection in one task:
            :mod:`mpdp.parties.session.multiplex`; the worker signs each bundle of answers once, under a key each
            party endorsed in its signed ready, the answers in it unsigned: :mod:`mpdp.broker.bundle`).
        rule_factory: builds the observer's rule; None = the posterior average rule for ``measure``
            (:func:`mpdp.protocols.rules.rule_factory.decision_rule` with ``engine="posterior"``).
        budget: every party's privacy budget (None: nobody is stopped, spending is still accounted).
        delta_slack: delta_tilde of the accounting (exact optimum of 000 Theorem 3.3), in [0, 1).
        party_rule: None, or ``"average"`` / ``"worst-case"``: every participant also decides f
            itself with its optimal rule of that kind (zero-one measure) from the published transcript
            and its own bit; :attr:`RoundOutcome.party_decisions` holds the decisions.
        party_broker: where the parties' workers connect, when not to ``broker`` (an external broker,
            e.g. an edge broker bridged to the observer's or another node of its cluster); None: ``broker``.
        protocol: one of :data:`PROTOCOLS`: ``"rr"`` (randomized response, the central observer
            decides) or ``"curator"`` (sealed bits, the curator releases the optimal central mechanism's
            output; one (epsilon, delta) for all, ``function`` the majority, no ``rule_factory``) or
            ``"mpc"`` (as the curator, but the bits are secret-shared among compute servers that release
            in MPyC: :mod:`mpdp.parties.mpc.session`).
        servers, threshold: mpc only: m compute servers, T < m/2 of them may collude.
        executor: None (the parties' workers are processes of this machine) or ``dask://HOST:PORT``: they run
            as tasks on that Dask cluster (:mod:`mpdp.parties.session.dask_pool`), reaching the broker by URL
            (``broker``, or ``party_broker``, must be external).
        validators: observer scale-out: validator processes that verify the parties' messages on an MQTT 5
            shared subscription and forward them to the observer (:mod:`mpdp.parties.session.validators`);
            0 = the observer reads them itself. Not with the embedded broker; rr only.

    Raises:
        ParameterError: any field out of its domain (named, with what is allowed).
    """

    session: str
    round_names: tuple[str, ...]
    bits: NDArray[np.int8]
    mechanisms: tuple[RandomizedResponse, ...]
    repetitions: int
    seed: int | None
    function: BooleanFunction
    measure: NDArray[np.float64]
    broker: BrokerSettings
    workers: int | None
    store_path: Path | None
    secure: bool = False
    round_timeout: float = 30.0
    ready_timeout: float = 60.0
    connect_concurrency: int = 32
    connections: str = "auto"
    rule_factory: RuleFactory | None = None
    budget: Budget | None = None
    delta_slack: float = DEFAULT_DELTA_SLACK
    party_rule: str | None = None
    protocol: str = "rr"
    servers: int = 3
    threshold: int = 1
    party_broker: BrokerSettings | None = None
    validators: int = 0
    executor: str | None = None
    decision_timeout: float | None = None

    def __post_init__(self) -> None:
        if self.protocol not in PROTOCOLS:
            raise ParameterError("protocol", self.protocol, "one of " + ", ".join(PROTOCOLS))
        if self.party_rule is not None and self.party_rule not in RULE_KINDS:
            raise ParameterError("party_rule", self.party_rule, "None or one of " + ", ".join(RULE_KINDS))
        if self.party_rule is not None and self.function.count_values(1) is None:
            raise ParameterError("function", self.function.name, "a symmetric function for party decisions")
        check_session(self.session)
        object.__setattr__(self, "delta_slack", check_privacy_options(self.budget, self.delta_slack))
        names = tuple(str(n) for n in self.round_names)
        bits = np.array(self.bits)
        k = len(self.mechanisms)
        if k < 1 or not all(isinstance(m, RandomizedResponse) for m in self.mechanisms):
            raise ParameterError("mechanisms", self.mechanisms, "one RandomizedResponse per party, k >= 1")
        if bits.ndim != 2 or bits.shape != (k, len(names)) or not names:
            raise ParameterError("bits", bits.shape, f"shape (k, R) = ({k}, {len(names)}), R >= 1")
        if not np.isin(bits, (-1, 0, 1)).all():
            raise ParameterError("bits", sorted(set(np.unique(bits).tolist()) - {-1, 0, 1}), "values 0, 1, -1")
        if any(len(n) > 200 for n in names):
            raise ParameterError("round_names", max(names, key=len), "names of at most 200 characters")
        bits = bits.astype(np.int8)
        bits.flags.writeable = False
        _check_int("repetitions", self.repetitions, 1, MAX_REPETITIONS)
        if self.workers is None:
            object.__setattr__(self, "workers", default_workers())
        _check_int("workers", self.workers, 1, 4096)
        _check_int("connect_concurrency", self.connect_concurrency, 1, 100_000)
        if self.connections not in CONNECTION_CHOICES:
            raise ParameterError("connections", self.connections, "one of " + ", ".join(CONNECTION_CHOICES))
        if self.seed is not None:
            _check_int("seed", self.seed, 0, None)
        if self.decision_timeout is None:
            object.__setattr__(self, "decision_timeout", self.round_timeout)
        for name in ("round_timeout", "ready_timeout", "decision_timeout"):
            value = getattr(self, name)
            if not (isinstance(value, int | float) and 0 < value < math.inf):
                raise ParameterError(name, value, "a finite number of seconds > 0")
        measure = np.asarray(self.measure, dtype=np.float64)
        if measure.ndim != 2 or measure.shape[0] != measure.shape[1]:
            raise ParameterError("measure", measure.shape, "a square |Y| x |Y| matrix")
        if not isinstance(self.broker, BrokerSettings):
            raise ParameterError("broker", self.broker, "a BrokerSettings (BrokerSettings.from_url)")
        check_validators(self.validators, self.broker.kind, self.protocol)
        if self.party_broker is not None and (
            not isinstance(self.party_broker, BrokerSettings) or self.party_broker.kind != "external"
        ):
            raise ParameterError("party_broker", self.party_broker,
                                 "None or the BrokerSettings of a running (external) broker")
        check_executor(self.executor, self.broker, self.party_broker)
        object.__setattr__(self, "round_names", names)
        object.__setattr__(self, "bits", bits)
        object.__setattr__(self, "mechanisms", tuple(self.mechanisms))
        object.__setattr__(self, "measure", measure)
        object.__setattr__(self, "store_path", None if self.store_path is None else Path(self.store_path))

    @property
    def k(self) -> int:
        """The number of parties."""
        return len(self.mechanisms)


def _check_int(name: str, value: object, low: int, high: int | None) -> None:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < low or (
        high is not None and value > high
    ):
        allowed = f"an integer in [{low}, {high}]" if high is not None else f"an integer >= {low}"
        raise ParameterError(name, value, allowed)
