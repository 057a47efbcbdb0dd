"""Figures 1-3 of 000, drawn from computation in the (false alarm, missed detection) plane.

* Figure 1: the privacy region R(eps, delta) of Theorem 2.1 (every (eps, delta)-DP mechanism lives in it).
* Figure 2: the exact region of the k-fold composition (Theorem 3.3) for k = 1..K: how it grows with k.
* Figure 3: the regions guaranteed by basic composition (Theorem 3.1, ``R(k eps, k delta)``), by
  Dwork-Rothblum-Vadhan (Theorem 3.2, the intersection over delta_tilde of
  ``R(eps_DRV(delta_tilde), k delta + delta_tilde)``) and the exact region (Theorem 3.3). A smaller region
  is a stronger guarantee.

Each function takes ``ax=None`` and returns the Figure (it writes nothing). Every region is drawn as two
lines, its lower boundary f(alpha) and upper boundary 1 - f(1 - alpha) on a grid of alpha, with gids
``<label>:lower`` / ``<label>:upper`` so the plotted values can be read back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from mpdp.analysis.plot_style import COLORS, figure_of, new_axes
from mpdp.analysis.privacy.composition import check_k, drv10_bound
from mpdp.analysis.privacy.privacy_region import (
    PrivacyRegion,
    composition_region,
    dp_region,
    intersection,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["draw_region", "figure_1", "figure_2", "figure_3", "figure_3_regions", "finish_plane"]

#: The grid of false-alarm values the region boundaries are drawn on.
ALPHA_GRID = np.linspace(0.0, 1.0, 2001)


def figure_3_regions(epsilon: float, delta: float, k: int) -> dict[str, PrivacyRegion]:
    """The three regions of 000 Figure 3 (default there: k = 30, (0.1, 0.001)), keyed by theorem."""
    k = check_k(k)
    slacks = np.logspace(-12, np.log10(max(1e-12, 1.0 - k * delta)) if k * delta < 1 else -12, 400)
    drv = [dp_region(drv10_bound(epsilon, k, s) or 0.0, min(k * delta + s, 1.0)) for s in slacks]
    return {
        "Theorem 3.1 (basic)": dp_region(k * epsilon, min(k * delta, 1.0)),
        "Theorem 3.2 (DRV10)": intersection(drv),
        "Theorem 3.3 (optimal)": composition_region(epsilon, delta, k),
    }


def finish_plane(ax: Axes, title: str) -> Figure:
    """Label the (false alarm, missed detection) plane on ``ax``, title it, add the legend; return the Figure."""
    ax.set_xlabel("false alarm $P_{FA}$")
    ax.set_ylabel("missed detection $P_{MD}$")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_aspect("equal")
    ax.set_title(title, fontsize=9)
    ax.legend(loc="upper right", fontsize=8)
    return figure_of(ax)


def draw_region(ax: Axes, region: PrivacyRegion, label: str, color: str | tuple[float, float, float, float],
                fill: float = 0.25) -> None:
    """Fill ``region`` on ``ax`` and draw its two boundaries (gids ``label:lower``, ``label:upper``); ``color``
    is a matplotlib color (a name or an RGBA tuple)."""
    low = region.lower_boundary(ALPHA_GRID)
    high = 1.0 - region.lower_boundary(1.0 - ALPHA_GRID)
    ax.fill_between(ALPHA_GRID, low, high, color=color, alpha=fill, label=label, lw=0)
    ax.plot(ALPHA_GRID, low, color=color, lw=1, gid=f"{label}:lower")
    ax.plot(ALPHA_GRID, high, color=color, lw=1, gid=f"{label}:upper")


def figure_1(epsilon: float = 1.0, delta: float = 0.1, ax: Axes | None = None) -> Figure:
    """000 Figure 1: R(epsilon, delta), with its corner points (0, 1 - delta), (a, a), (1 - delta, 0) marked,
    a = (1 - delta) / (1 + e^eps)."""
    _, ax = new_axes(ax, (5.5, 5.5))
    draw_region(ax, dp_region(epsilon, delta), f"R({epsilon:g}, {delta:g})", COLORS[0])
    a = (1.0 - delta) / (1.0 + np.exp(epsilon))
    ax.plot([0.0, a, 1.0 - delta], [1.0 - delta, a, 0.0], "ko", ms=4, gid="corners")
    ax.plot([0, 1], [1, 0], color="gray", lw=0.8, ls=":")
    return finish_plane(ax, f"000 Fig. 1: the privacy region R(eps, delta), eps = {epsilon:g}, delta = {delta:g}")


def figure_2(epsilon: float = 0.4, delta: float = 0.01, k_max: int = 5, ax: Axes | None = None) -> Figure:
    """000 Figure 2: the exact k-fold composition region of Theorem 3.3 for k = 1..k_max (nested, growing)."""
    _, ax = new_axes(ax, (5.5, 5.5))
    from matplotlib import colormaps

    cmap = colormaps["viridis"]
    for k in range(check_k(k_max), 0, -1):
        draw_region(ax, composition_region(epsilon, delta, k), f"k = {k}", cmap((k - 1) / max(k_max - 1, 1)),
                    fill=0.35)
    return finish_plane(ax, f"000 Fig. 2: Theorem 3.3, k-fold composition of ({epsilon:g}, {delta:g})-DP, k = 1..{k_max}")


def figure_3(epsilon: float = 0.1, delta: float = 0.001, k: int = 30, ax: Axes | None = None) -> Figure:
    """000 Figure 3: the regions of Theorems 3.1, 3.2 and 3.3 for the k-fold composition."""
    _, ax = new_axes(ax, (5.5, 5.5))
    regions = figure_3_regions(epsilon, delta, k)
    for (label, region), colour in zip(regions.items(), (COLORS[7], COLORS[0], COLORS[3]), strict=True):
        draw_region(ax, region, label, colour)
    return finish_plane(ax, f"000 Fig. 3: {k}-fold composition of ({epsilon:g}, {delta:g})-DP")
