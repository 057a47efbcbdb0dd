"""``mpdp.estimate``: the Monte Carlo engine, no broker: the average accuracy (002 eq. (1)) of the
optimal average-case rule, estimated from sampled inputs and transcripts, with its Hoeffding interval.

Example:
    >>> import mpdp
    >>> r = mpdp.estimate(epsilon=1.0, parties=5, function="majority", samples=20_000, seed=1)
    >>> r.samples, r.ci_low < r.average_accuracy < r.ci_high
    (20000, True)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from mpdp.analysis.theory.accuracy import monte_carlo_accuracy
from mpdp.analysis.theory.monte_carlo_cost import monte_carlo_cost, wide_monte_carlo_cost
from mpdp.parties.api.params import check_count, function_of, randomized_responses
from mpdp.parties.api.result import Result, strict_document
from mpdp.protocols.functions import BooleanFunction, accuracy_measure
from mpdp.protocols.numerics.cost import DEFAULT_TIME_LIMIT, check_time_limit, noun
from mpdp.protocols.rules.symmetric import observer_average_rule

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["Estimate", "estimate", "rules_title"]


def rules_title(document: Mapping[str, Any], what: str) -> str:
    """A plot title for a rules document (``mpdp accuracy --json`` shape): what, f, k and the observer."""
    return f"{what}: {document['function']} of {document['k']} {noun(document['k'], 'party', 'parties')}, observer {document['observer']}"


@dataclass(frozen=True, repr=False)
class Estimate(Result):
    """A Monte Carlo estimate of the average accuracy of the optimal average-case rule.

    Attributes:
        document: ``{"k", "function", "measure", "observer", "engine", "rules": {"average": {...}}}``, the
            shape of ``mpdp accuracy --json`` when it falls back to Monte Carlo (:meth:`to_dict`).
    """

    document: dict[str, Any]

    @property
    def _average(self) -> dict[str, Any]:
        average: dict[str, Any] = self.document["rules"]["average"]
        return average

    @property
    def average_accuracy(self) -> float:
        """The estimate (zero-one: a probability; other measures: minus an expected error)."""
        return float(self._average["average_accuracy"])

    @property
    def ci_low(self) -> float:
        """Lower end of the Hoeffding interval at :attr:`confidence`."""
        return float(self._average["interval"][0])

    @property
    def ci_high(self) -> float:
        """Upper end of the Hoeffding interval at :attr:`confidence`."""
        return float(self._average["interval"][1])

    @property
    def samples(self) -> int:
        """Sampled (input, transcript) pairs."""
        return int(self._average["samples"])

    def rows(self) -> Sequence[Mapping[str, Any]]:
        """One row: the estimate with its interval."""
        return [{"rule": "average", "average_accuracy": self.average_accuracy, "ci_low": self.ci_low,
                 "ci_high": self.ci_high, "confidence": self._average["confidence"], "samples": self.samples}]

    def summary(self) -> str:
        return (f"k={self.document['k']} {self.document['function']}: average accuracy ~ "
                f"{self.average_accuracy:.4g} [{self.ci_low:.4g}, {self.ci_high:.4g}] ({self.samples} samples)")

    def draw(self, ax: Axes | None) -> Figure:
        """The estimate and its interval as a point with an error bar (gid ``estimate``)."""
        from mpdp.analysis.plot_style import COLORS, new_axes

        figure, ax = new_axes(ax, (5.0, 2.0))
        ax.errorbar([self.average_accuracy], [0], xerr=[[self.average_accuracy - self.ci_low],
                                                        [self.ci_high - self.average_accuracy]],
                    fmt="o", capsize=4, color=COLORS[0], gid="estimate",
                    label=f"Monte Carlo ({self._average['confidence']:.0%} Hoeffding, {self.samples} samples)")
        ax.set_yticks([])
        ax.set_xlabel(f"average accuracy ({self.document['measure']})")
        ax.set_title(rules_title(self.document, "Monte Carlo estimate"), fontsize=9)
        ax.legend(fontsize=8)
        return figure


def estimate(
    epsilon: float | str | Sequence[float] = 1.0,
    parties: int | None = None,
    function: str | BooleanFunction = "majority",
    delta: float | str | Sequence[float] = 0.0,
    measure: str = "zero-one",
    party: int | None = None,
    samples: int = 100_000,
    seed: int | np.random.Generator | None = None,
    confidence: float = 0.95,
    progress: Callable[[int], None] | None = None,
    time_limit: float | None = DEFAULT_TIME_LIMIT,
) -> Estimate:
    """Estimate the average accuracy of the optimal average-case rule (002 eq. (4)) by Monte Carlo:
    inputs x uniform on {0, 1}^k, one randomized-response transcript each
    (:func:`mpdp.analysis.theory.accuracy.monte_carlo_accuracy`).

    Args:
        epsilon: one epsilon (nats) for ``parties`` parties, or one per party; a text as ``mpdp accuracy
            --epsilon`` reads it (``"0.5,1"``, ``"1*3"``). parties: k with one epsilon.
        function: a symmetric f (``majority``, ``xor``, ``threshold:T``, ...). delta: one or one per party.
        measure: ``zero-one`` (default), ``absolute-error`` or ``squared-error``.
        party: the deciding party (0-based), or None for the central observer.
        samples: transcripts (>= 1). seed: an int or a numpy Generator (None: OS entropy).
        confidence: level of the Hoeffding interval, in (0, 1).
        progress: called with the transcripts each batch drew (they add up to ``samples``), e.g. a progress
            bar's advance; the estimate does not depend on it.
        time_limit: seconds allowed (default 60; None: no limit): an estimate whose up-front cost
            (:func:`mpdp.analysis.theory.monte_carlo_cost.monte_carlo_cost`) is longer is refused before any draw.

    Returns:
        :class:`Estimate`.

    Raises:
        ParameterError: a bad epsilon, delta, function, measure, party, samples, confidence or time_limit.
        CostLimitError: the estimate would take longer than ``time_limit`` (or more memory than the
            machine has), naming its estimate and what to do instead.

    Example:
        >>> estimate(epsilon=[0.5, 1.0, 2.0], function="xor", samples=1000, seed=2).document["k"]
        3
    """
    party = None if party is None else check_count("party", party, low=0)
    samples = check_count("samples", samples)
    seed = seed if seed is None or isinstance(seed, np.random.Generator) else check_count("seed", seed, low=0)
    mechanisms = randomized_responses(epsilon, delta, parties)
    f = function_of(function)
    limit = check_time_limit(time_limit)
    instead = ("fewer samples (the interval widens as 1/sqrt(samples)), fewer distinct (epsilon, delta), or "
               "more time (time_limit=SECONDS)")
    accuracy_measure(measure, 1)  # the name checked before any (|Y|, |Y|) table
    symmetric = f.count_values(len(mechanisms)) is not None
    wide = wide_monte_carlo_cost(mechanisms, f, party, samples, instead) if symmetric else None
    if wide is not None:  # sum: checked before its measure and gain tables are built
        wide.check(limit)
    w = accuracy_measure(measure, f.output_size(len(mechanisms)))
    rule = observer_average_rule(mechanisms, f, w, party)
    if wide is None:
        monte_carlo_cost(rule, samples, instead).check(limit)
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    est = monte_carlo_accuracy(rule, f, w, samples, rng, confidence, progress)
    assert est.interval is not None  # the Monte Carlo estimate always has its interval
    return Estimate(strict_document({
        "k": len(mechanisms), "function": f.name, "measure": measure,
        "observer": "central" if party is None else party, "engine": "posterior-monte-carlo",
        "rules": {"average": {"average_accuracy": est.average, "worst_case_accuracy": None, "exact": False,
                              "interval": list(est.interval), "confidence": est.confidence,
                              "samples": est.samples}}}, "estimate", {
        "epsilon": epsilon, "parties": parties, "function": f.name, "delta": delta, "measure": measure, "party": party,
        "samples": samples, "seed": seed if not isinstance(seed, np.random.Generator) else "generator",
        "confidence": confidence}))
