"""``mpdp.compose``: the privacy of k composed (epsilon, delta)-DP mechanisms (000, Theorems 3.1-3.4).

Example:
    >>> import mpdp
    >>> r = mpdp.compose(epsilon=0.1, delta=0.0, k=30, delta_slack=1e-5)
    >>> r.method, round(r.epsilon_tilde, 4), round(r.to_dict()["bounds"]["basic"], 9)
    ('exact', 2.1102, 3.0)
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from mpdp.analysis.privacy.composition import (
    BOUND_NAMES,
    CompositionResult,
    check_delta_slack,
    compose_homogeneous,
    slack_for_total_delta,
)
from mpdp.analysis.privacy.heterogeneous import DEFAULT_REL_WIDTH, compose_heterogeneous
from mpdp.parties.api.keywords import checked_keywords
from mpdp.parties.api.params import check_count, per_party_values
from mpdp.parties.api.result import Result, strict_document
from mpdp.parties.rounds.privacy import DEFAULT_DELTA_SLACK
from mpdp.protocols.errors import ParameterError
from mpdp.protocols.numerics.cost import check_time_limit

if TYPE_CHECKING:
    from dp_accounting import DpEvent
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["Composition", "compose"]


@dataclass(frozen=True, repr=False)
class Composition(Result):
    """The composed guarantee (``mpdp compose --json``): ``epsilon_tilde`` at ``delta_total``.

    Attributes:
        result: the analysis' :class:`mpdp.analysis.privacy.composition.CompositionResult`.
        epsilons, deltas: the composed mechanisms' levels: one value each (homogeneous, ``k`` times), or k.
        document: the ``--json`` document (:meth:`to_dict`).
    """

    result: CompositionResult
    epsilons: tuple[float, ...]
    deltas: tuple[float, ...]
    document: dict[str, Any]

    @property
    def epsilon_tilde(self) -> float:
        """The optimal composed epsilon (nats), or its certified upper bound (method ``bounds``)."""
        return self.result.epsilon_tilde

    @property
    def delta_total(self) -> float:
        """The composed delta: ``1 - prod(1 - delta_l) (1 - delta_slack)``."""
        return self.result.delta_total

    @property
    def method(self) -> str:
        """``"exact"`` or ``"bounds"``."""
        return self.result.method

    def to_dp_event(self) -> DpEvent:
        """The composed mechanisms as a dp_accounting ``DpEvent``, for its PLD or RDP accountant
        (``NeighboringRelation.REPLACE_ONE``); see :meth:`mpdp.analysis.privacy.composition.CompositionResult.to_dp_event`.

        Raises:
            ParameterError: a mechanism with delta > 0 (dp_accounting has no event for it).
            ImportError: dp_accounting is not installed (``pip install 'mpdp[interop]'``).
        """
        return self.result.to_dp_event()

    def rows(self) -> Sequence[Mapping[str, Any]]:
        """One row per guarantee: the optimum (``optimal``) and each bound of :data:`BOUND_NAMES`."""
        rows: list[Mapping[str, Any]] = [{"guarantee": f"optimal ({self.method})", "epsilon": self.epsilon_tilde}]
        rows.extend({"guarantee": name, "epsilon": self.result.bounds.get(name)} for name in BOUND_NAMES)
        return rows

    def summary(self) -> str:
        return (f"k={self.result.k}: epsilon_tilde={self.epsilon_tilde:.6g} ({self.method}) at "
                f"delta_total={self.delta_total:.3g}")

    def draw(self, ax: Axes | None) -> Figure:
        """Homogeneous: the privacy regions of Theorems 3.1-3.3 (000 Figure 3, false alarm against missed
        detection); heterogeneous: the composed epsilon of each guarantee as bars."""
        if len(self.epsilons) == 1:
            from mpdp.analysis.figures.composition_plot import figure_3

            return figure_3(self.epsilons[0], self.deltas[0], self.result.k, ax=ax)
        from mpdp.analysis.plot_style import COLORS, new_axes

        figure, ax = new_axes(ax, (6.0, 3.0))
        shown = [(str(r["guarantee"]), float(r["epsilon"])) for r in self.rows() if r["epsilon"] is not None]
        ax.barh([name for name, _ in shown], [value for _, value in shown], color=COLORS[0], gid="epsilon")
        ax.invert_yaxis()
        ax.set_xlabel(r"composed $\tilde\varepsilon$ (nats)")
        ax.set_title(f"{self.result.k} heterogeneous mechanisms, $\\delta_{{total}}$ = {self.delta_total:.3g}",
                     fontsize=9)
        return figure


@checked_keywords("mpdp.compose")
def compose(
    epsilon: float | str | Sequence[float],
    delta: float | str | Sequence[float] = 0.0,
    k: int | None = None,
    delta_slack: float | None = None,
    *,
    total_delta: float | None = None,
    rel_width: float = DEFAULT_REL_WIDTH,
    resolution: float | None = None,
    time_limit: float | None = None,
) -> Composition:
    """Compose k (epsilon, delta)-DP mechanisms: the exact optimum of 000 Theorem 3.3 (homogeneous) or of
    the heterogeneous theorem (exact where tractable, else certified bounds), with the classical bounds.

    Args:
        epsilon: one epsilon in [0, inf] (nats) with ``k``, or one per mechanism; a text is read as
            ``mpdp compose --epsilon`` reads it (``"0.1"``, ``"0.1,0.5"``, ``"0.5*3"``;
            :func:`mpdp.parties.api.params.per_party_values`).
        delta: one delta in [0, 1) for all, or one per mechanism (a text as ``epsilon``).
        k: the number of compositions of a single (epsilon, delta) (default 1); with lists, None or their length.
        delta_slack: delta_tilde in [0, 1) (default 1e-6, as ``mpdp simulate``).
        total_delta: instead of ``delta_slack``: the epsilon of the composition at this total delta (the
            slack is what the mechanisms' own deltas leave of it).
        rel_width: heterogeneous certified bounds are refined until (upper - lower) / upper <= this
            (default 0.5%), within ``time_limit`` seconds (None: no limit; the bracket reached is reported).
        resolution: instead, one pass of the heterogeneous bounds at this lattice step (nats).

    Returns:
        :class:`Composition` (``to_dict()`` is ``mpdp compose --json``).

    Raises:
        ParameterError: a value outside its domain, or lists of different lengths.
        SizeLimitError: k beyond the exact engine.

    Example:
        >>> compose(epsilon=[0.1, 0.5, 0.5], delta=0.0, delta_slack=1e-6).to_dict()["k"]
        3
    """
    if total_delta is not None and delta_slack is not None:
        raise ParameterError("delta_slack", delta_slack, "omitted when total_delta=D is given (one or the other)")
    if resolution is not None and not (math.isfinite(resolution) and resolution > 0):
        raise ParameterError("resolution", resolution, "a lattice step in nats > 0")
    if not 0 < rel_width < 1:
        raise ParameterError("rel_width", rel_width, "a relative width in (0, 1), e.g. 0.005")
    time_limit = check_time_limit(time_limit)
    k = None if k is None else check_count("k", k)
    epsilons, deltas = per_party_values(epsilon, "epsilon"), per_party_values(delta, "delta")
    if not epsilons:
        raise ParameterError("epsilon", epsilon, "one epsilon (with k) or a non-empty list")
    if len(epsilons) == 1:
        if len(deltas) != 1:
            raise ParameterError("delta", delta, "one value when epsilon has one value (with k)")
        count = 1 if k is None else k
        result = compose_homogeneous(epsilons[0], deltas[0], count, _slack(delta_slack, total_delta, deltas[0], count))
    else:
        if len(deltas) not in (1, len(epsilons)):
            raise ParameterError("delta", delta, f"one value, or {len(epsilons)} (one per epsilon value)")
        if k is not None and k != len(epsilons):
            raise ParameterError("k", k, f"omitted or equal to the number of epsilon values ({len(epsilons)})")
        deltas = deltas if len(deltas) > 1 else deltas * len(epsilons)
        per = np.asarray(deltas, dtype=np.float64)
        result = compose_heterogeneous(epsilons, per, _slack(delta_slack, total_delta, per, 1),
                                       resolution=resolution, rel_width=rel_width, time_limit=time_limit)
    inputs = {"epsilon": epsilons if len(epsilons) > 1 else epsilons[0], "delta": deltas if len(deltas) > 1 else deltas[0],
              "k": k, "delta_slack": delta_slack, "total_delta": total_delta, "rel_width": rel_width,
              "resolution": resolution}
    return Composition(result, tuple(epsilons), tuple(deltas), strict_document(result.as_dict(), "compose", inputs))


def _slack(delta_slack: float | None, total_delta: float | None, deltas: float | NDArray[np.float64],
           k: int) -> float:
    """``delta_slack`` (default 1e-6), or the slack that ``total_delta`` leaves after the mechanisms' deltas."""
    if total_delta is None:
        return check_delta_slack(DEFAULT_DELTA_SLACK if delta_slack is None else delta_slack)
    try:
        return slack_for_total_delta(deltas, total_delta, k)
    except ParameterError as exc:
        raise ParameterError("total_delta", total_delta, exc.allowed) from None
