"""``mpdp.sweep``: accuracy against epsilon over a grid, exact theory next to Monte Carlo measurement.

The computation is :func:`mpdp.analysis.sweep.sweep` (002 eqs. (1)-(6) per point, Clopper-Pearson
intervals, Bonferroni-corrected exact binomial verdicts); this module gives it the API's result type
(:class:`~mpdp.parties.api.result.Result`: ``to_dict``, ``to_frame``, ``plot``, notebook display).

Example:
    >>> import mpdp
    >>> r = mpdp.sweep("0.5:1:2", parties=11, rule="average", observer="central", samples=2000, seed=1)
    >>> [round(row["theoretical_accuracy"], 4) for row in r.rows()], r.consistent
    ([0.5825, 0.6608], True)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import Executor
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from mpdp.analysis.sweep import OBSERVERS, SweepResult, grid_of
from mpdp.analysis.sweep import sweep as sweep_grid
from mpdp.parties.api.result import Result
from mpdp.protocols.rules import RULE_KINDS

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["Sweep", "sweep"]


@dataclass(frozen=True, slots=True, repr=False)
class Sweep(Result):
    """A finished sweep: :attr:`result` (the points) and its ``--json`` document.

    Attributes:
        document: what ``mpdp sweep --json`` prints (``schema_version``, ``inputs``, ``points``, ...).
        result: the :class:`~mpdp.analysis.sweep.SweepResult` (its ``points`` and ``to_csv``).
    """

    document: dict[str, Any]
    result: SweepResult

    @property
    def consistent(self) -> bool:
        """True when every point's measurement is consistent with its exact theory."""
        return self.result.consistent

    def rows(self) -> Sequence[Mapping[str, Any]]:
        """One row per point (the fields of :class:`~mpdp.analysis.sweep.SweepPoint`)."""
        return [asdict(p) for p in self.result.points]

    def summary(self) -> str:
        return repr(self.result)

    def draw(self, ax: Axes | None) -> Figure:
        """Theory curves and measured points with their intervals (:meth:`SweepResult.plot`)."""
        return self.result.plot(ax)


def sweep(
    epsilon: str | Sequence[float] | NDArray[np.float64],
    *,
    parties: int | Iterable[int] = 101,
    delta: float | Iterable[float] = 0.0,
    function: str | Iterable[str] = "majority",
    rule: str | Iterable[str] = RULE_KINDS,
    observer: str | Iterable[str] = OBSERVERS,
    samples: int = 100_000,
    seed: int = 0,
    alpha: float = 0.05,
    scale: str = "log",
    executor: Executor | None = None,
) -> Sweep:
    """Exact and Monte Carlo accuracy of the optimal rules over a grid (:func:`mpdp.analysis.sweep.sweep`).

    Args:
        epsilon: ``"LO:HI:STEPS"`` (spaced by ``scale``), one value, or the grid itself, nats.
        parties, delta, function, rule, observer, samples, seed, alpha, scale, executor: as
            :func:`mpdp.analysis.sweep.sweep` (one value or several each; the grid is their product).

    Returns:
        :class:`Sweep` (``to_dict()`` is ``mpdp sweep --json``).

    Raises:
        ParameterError: a bad value, named with what is allowed (``epsilon`` not ``LO:HI:STEPS``).
        SizeLimitError: as :func:`mpdp.analysis.sweep.sweep`.
    """
    grid = grid_of(epsilon, scale) if isinstance(epsilon, str) else epsilon
    result = sweep_grid(grid, parties=parties, delta=delta, function=function, rule=rule, observer=observer,
                        samples=samples, seed=seed, alpha=alpha, scale=scale, executor=executor)
    return Sweep(document=result.to_dict(), result=result)

