"""The runner's rules of the central protocols (curator, mpc): what each releases, at which privacy level, and
the store a run opens (:class:`CentralSession`, which the curator's and the mpc protocol's runner plug-ins are
composed of).

A central run takes the :class:`mpdp.parties.rounds.config.RunConfig` of randomized response with
``protocol="curator"`` or ``"mpc"``: ``mechanisms`` give each party's privacy level (one (epsilon, delta) for all:
the central mechanism is (epsilon, delta)-DP for every vote), ``function`` one the protocol releases
(:data:`CENTRAL_FUNCTIONS`), ``measure`` is not used and ``rule_factory`` must be None.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

from mpdp.analysis.privacy.accounting import Spent
from mpdp.parties.ballots.store import BallotStore
from mpdp.parties.rounds.config import RunConfig
from mpdp.parties.rounds.outcome import RoundOutcome
from mpdp.parties.rounds.store import TranscriptStore
from mpdp.protocols.errors import ParameterError
from mpdp.protocols.randomization.mechanisms import RandomizedResponse
from mpdp.protocols.randomization.secure import rng_mode

__all__ = ["CENTRAL_FUNCTIONS", "CentralSession", "central_privacy_level", "check_central_function",
           "curator_privacy_level"]


#: What each central protocol releases: the curator every binary symmetric function by 001's optimal
#: central mechanism (:func:`mpdp.protocols.colorings.majority_mechanism.central_mechanism`; ``threshold:T`` for any
#: T), the secure computation the majority and the sum (000's geometric mechanism, §4.2). Aliases
#: (:func:`mpdp.protocols.functions.parse_function`): passed = majority, parity = xor.
CENTRAL_FUNCTIONS: Mapping[str, tuple[str, ...]] = {"curator": ("majority", "and", "or", "xor", "threshold:T"),
                                                   "mpc": ("majority", "sum")}

_ALIASES = {"majority": "majority (or passed)", "xor": "xor (or parity)"}


def check_central_function(function: str, protocol: str, name: str = "function") -> None:
    """Refuse a ``function`` (a :class:`mpdp.protocols.functions.BooleanFunction` name, e.g.
    ``threshold:3``) the central ``protocol`` (``curator`` or ``mpc``) does not release.

    Raises:
        ParameterError: (named ``name``) a protocol that is not central, or a function outside
            :data:`CENTRAL_FUNCTIONS` [protocol]; the message lists the allowed ones and the alternative.
    """
    if protocol not in CENTRAL_FUNCTIONS:
        raise ParameterError("protocol", protocol, f"one of {', '.join(CENTRAL_FUNCTIONS)}")
    allowed = CENTRAL_FUNCTIONS[protocol]
    key = "threshold:T" if function.startswith("threshold:") else function
    if key not in allowed:
        listed = ", ".join(_ALIASES.get(a, a) for a in allowed)
        raise ParameterError(name, function, f"one of {listed} for the {protocol} protocol",
                             hint="other functions: protocol rr (randomized response)")


def central_privacy_level(mechanisms: Sequence[RandomizedResponse], function: str,
                          protocol: str) -> tuple[float, float]:
    """The (epsilon, delta) of the central mechanism ``protocol`` (``curator`` or ``mpc``) releases for
    ``function`` over parties with these ``mechanisms``: their one level for a binary function; (epsilon, 0)
    for the sum (the two-sided geometric mechanism at epsilon is pure DP).

    Raises:
        ParameterError: a protocol that is not central; a function the protocol does not release
            (:func:`check_central_function`: names the allowed ones and the alternative); parties with
            different privacy levels; a sum at an epsilon that is not finite and > 0.
    """
    check_central_function(function, protocol)
    levels = sorted({(m.epsilon, m.delta) for m in mechanisms})
    if len(levels) != 1:
        raise ParameterError("epsilon", f"{len(levels)} different (epsilon, delta) levels",
                             f"one epsilon and one delta for every party in the {protocol} protocol",
                             hint="per-party levels: --protocol rr")
    epsilon, delta = levels[0]
    if function != "sum":
        return epsilon, delta
    if not 0.0 < epsilon < math.inf:
        raise ParameterError("epsilon", epsilon, "a finite epsilon > 0 for the geometric mechanism (sum)")
    return epsilon, 0.0


def curator_privacy_level(config: RunConfig) -> tuple[float, float]:
    """The (epsilon, delta) of the central mechanism a run of a central protocol (``config.protocol``:
    ``curator`` or ``mpc``) releases (:func:`central_privacy_level`).

    Raises:
        ParameterError: as :func:`central_privacy_level`, or a rule factory (the release needs no rule).
    """
    if config.rule_factory is not None:
        raise ParameterError("rule_factory", config.rule_factory, "None: the central release has no decision rule")
    return central_privacy_level(config.mechanisms, config.function.name, config.protocol)


class CentralSession:
    """What the runner plug-ins of the central protocols share (each plug-in holds one: composition, not a
    base class): the privacy level and checks of a run, its ballot store, its rounds as returned.

    Args:
        store: opens the protocol's store at a path (:class:`mpdp.parties.ballots.store.BallotStore`, or one
            with more tables).
    """

    def __init__(self, store: Callable[[Path | None], BallotStore]) -> None:
        self._store = store

    def privacy_level(self, config: RunConfig) -> tuple[float, float]:
        """The (epsilon, delta) of the released mechanism (:func:`curator_privacy_level`).

        Raises:
            ParameterError: as :func:`curator_privacy_level`.
        """
        return curator_privacy_level(config)

    @contextlib.contextmanager
    def open_store(self, config: RunConfig) -> Iterator[tuple[BallotStore, frozenset[int]]]:
        """The store with the session, its (epsilon, delta) and function opened; the rounds already recorded.

        Raises:
            ParameterError: the session is stored with other parameters; the store is not writable.
        """
        epsilon, delta = self.privacy_level(config)
        with self._store(config.store_path) as store:
            yield store, store.open_central_session(config.session, config.k, config.repetitions,
                                                    config.round_names, epsilon, delta,
                                                    mode=rng_mode(config.secure), function=config.function.name)

    def load(self, store: TranscriptStore, session: str, index: int) -> RoundOutcome:
        """A recorded round: the released outputs (no symbols: ballots and shares are sealed)."""
        return store.load_round(session, index, symbols=False)

    def finish(self, config: RunConfig, store: TranscriptStore,
               outcomes: Sequence[RoundOutcome]) -> tuple[tuple[RoundOutcome, ...], tuple[Spent, ...]]:
        """The rounds as released; no per-party spending (the parties release nothing themselves)."""
        return tuple(outcomes), ()
