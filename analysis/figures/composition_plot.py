"""Figures 1-3 of 000, drawn from computation in the (false alarm, missed detection) plane.

* Figure 1: the privacy region R(eps, delta) of Theorem 2.1 (every (eps, delta)-DP mechanism lives in it).
* Figure 2: the exact region of the k-fold composition (Theorem 3.3) for k = 1..K: how it grows with k.
* Figure 3: the regions guaranteed by basic composition (Theorem 3.1, ``R(k eps, k delta)``), by
  Dwork-Rothblum-Vadhan (Theorem 3.2, the intersection over delta_tilde of
  ``R(eps_DRV(delta_tilde), k delta + delta_tilde)``) and the exact region (Theorem 3.3). A smaller region
  is a stronger guarantee.

Each function takes ``ax=None`` and returns the Figure (it writes nothing). Every region is drawn as two
lines, its lower boundary f(alpha) and upper boundary 1 - f(1 - alpha) on a grid of alpha, with gids
``<key>:lower`` / ``<key>:upper`` so the plotted values can be read back (the key is the plain-text label:
``k = 2``, ``Theorem 3.1 (basic)``, ``R(1, 0.1)``). Nested regions are filled opaque, largest first, in a
light tint of their line colour: every band shows exactly the colour of its legend entry (no blending).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from mpdp.analysis.plot_style import COLORS, eps_delta, figure_of, new_axes
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

__all__ = ["draw_region", "figure_1", "figure_2", "figure_3", "figure_3_regions", "finish_plane", "plane_legend"]

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


def plane_legend(ax: Axes, handles: list[Any] | None = None, labels: list[str] | None = None, **kw: Any) -> None:
    """The legend of a (false alarm, missed detection) plane, below the axes (where it hides no boundary)."""
    if handles is None or labels is None:
        handles, labels = ax.get_legend_handles_labels()
    ax.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, -0.12), fontsize=8, frameon=False,
              **{"ncol": 2, **kw})


def finish_plane(ax: Axes, title: str) -> Figure:
    """Label the (false alarm, missed detection) plane on ``ax``, title it, add the legend (below the
    axes: :func:`plane_legend`); return the Figure."""
    ax.set_xlabel("false alarm $P_{FA}$")
    ax.set_ylabel("missed detection $P_{MD}$")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_aspect("equal")
    ax.set_title(title, fontsize=9)
    plane_legend(ax)
    return figure_of(ax)


def draw_region(ax: Axes, region: PrivacyRegion, label: str, color: str | tuple[float, float, float, float],
                fill: float = 0.25, key: str | None = None) -> None:
    """Fill ``region`` on ``ax`` and draw its two boundaries (gids ``key:lower``, ``key:upper``; ``key``
    defaults to ``label``). ``color`` is a matplotlib color (a name or an RGBA tuple) for the boundary; the
    fill is opaque, ``fill`` of the way from white to ``color`` (draw nested regions largest first, and
    each visible band has its legend entry's colour)."""
    from matplotlib.colors import to_rgb

    key = label if key is None else key
    low = region.lower_boundary(ALPHA_GRID)
    high = 1.0 - region.lower_boundary(1.0 - ALPHA_GRID)
    tint = tuple(1.0 - fill + fill * c for c in to_rgb(color))
    ax.fill_between(ALPHA_GRID, low, high, facecolor=tint, edgecolor=color, label=label, lw=1, gid=f"{key}:fill")
    ax.plot(ALPHA_GRID, low, color=color, lw=1, gid=f"{key}:lower")
    ax.plot(ALPHA_GRID, high, color=color, lw=1, gid=f"{key}:upper")


def figure_1(epsilon: float = 1.0, delta: float = 0.1, ax: Axes | None = None) -> Figure:
    """000 Figure 1: R(epsilon, delta), with its corner points (0, 1 - delta), (a, a), (1 - delta, 0) marked,
    a = (1 - delta) / (1 + e^eps) (gid ``corners``); the region's gids are keyed ``R(<eps>, <delta>)``."""
    _, ax = new_axes(ax, (5.5, 5.5))
    draw_region(ax, dp_region(epsilon, delta), r"$R(\varepsilon, \delta)$", COLORS[0], key=f"R({epsilon:g}, {delta:g})")
    a = (1.0 - delta) / (1.0 + np.exp(epsilon))
    ax.plot([0.0, a, 1.0 - delta], [1.0 - delta, a, 0.0], "ko", ms=4, gid="corners",
            label=r"corners $(0, 1-\delta)$, $(a, a)$, $(1-\delta, 0)$; $a = \frac{1-\delta}{1+e^\varepsilon}$")
    ax.plot([0, 1], [1, 0], color="gray", lw=0.8, ls=":", label=r"$P_{FA} + P_{MD} = 1$ (no information)")
    return finish_plane(ax, f"000 Fig. 1: the privacy region $R(\\varepsilon, \\delta)$, {eps_delta(epsilon, delta)}")


def figure_2(epsilon: float = 0.4, delta: float = 0.01, k_max: int = 5, ax: Axes | None = None) -> Figure:
    """000 Figure 2: the exact k-fold composition region of Theorem 3.3 for k = 1..k_max (nested, growing),
    one colour of a sequential scale per k (legend entries ``k = 1`` ... as the gids' keys)."""
    _, ax = new_axes(ax, (5.5, 5.5))
    from matplotlib import colormaps

    cmap = colormaps["viridis"]
    for k in range(check_k(k_max), 0, -1):  # largest region first: each band keeps its own colour
        draw_region(ax, composition_region(epsilon, delta, k), f"k = {k}", cmap(0.9 * (k - 1) / max(k_max - 1, 1)),
                    fill=0.45)
    handles, labels = ax.get_legend_handles_labels()
    figure = finish_plane(ax, f"000 Fig. 2: Theorem 3.3, $k$-fold composition of {eps_delta(epsilon, delta)}-DP, "
                              f"$k$ = 1..{k_max}")
    plane_legend(ax, handles[::-1], labels[::-1], ncol=k_max, title="exact region of the $k$-fold composition",
                 title_fontsize=8)
    return figure


def figure_3(epsilon: float = 0.1, delta: float = 0.001, k: int = 30, ax: Axes | None = None) -> Figure:
    """000 Figure 3: the regions of Theorems 3.1, 3.2 and 3.3 for the k-fold composition (largest first)."""
    _, ax = new_axes(ax, (5.5, 5.5))
    regions = figure_3_regions(epsilon, delta, k)
    for (label, region), colour in zip(regions.items(), (COLORS[7], COLORS[0], COLORS[3]), strict=True):
        draw_region(ax, region, label, colour, fill=0.3)
    return finish_plane(ax, f"000 Fig. 3: {k}-fold composition of {eps_delta(epsilon, delta)}-DP mechanisms")
