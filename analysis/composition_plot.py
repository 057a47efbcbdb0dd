"""Figure 3 of 000: the privacy regions of Theorems 3.1, 3.2 and 3.3 for a k-fold composition.

Draws, in the (false alarm, missed detection) plane, the region guaranteed by basic composition
(Theorem 3.1, ``R(k eps, k delta)``), by Dwork-Rothblum-Vadhan (Theorem 3.2, the intersection over
delta_tilde of ``R(eps_DRV(delta_tilde), k delta + delta_tilde)``) and the exact region (Theorem 3.3).
A smaller region is a stronger guarantee. Writes a file only because the caller asks for it.
"""

from __future__ import annotations

import pathlib

import numpy as np

from mpdp.analysis.composition import check_k, drv10_bound
from mpdp.analysis.privacy_region import (
    PrivacyRegion,
    composition_region,
    dp_region,
    intersection,
)

__all__ = ["figure_3_regions", "plot_figure_3"]


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


def plot_figure_3(path: str | pathlib.Path, epsilon: float = 0.1, delta: float = 0.001, k: int = 30) -> pathlib.Path:
    """Draw Figure 3 of 000 to ``path`` (format from the suffix, e.g. .png, .pdf); returns the path."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    regions = figure_3_regions(epsilon, delta, k)
    fig, ax = plt.subplots(figsize=(5.5, 5.5))
    alpha = np.linspace(0.0, 1.0, 2001)
    for (label, region), colour in zip(regions.items(), ("tab:gray", "tab:blue", "tab:red"), strict=True):
        low = region.lower_boundary(alpha)
        high = 1.0 - region.lower_boundary(1.0 - alpha)
        ax.fill_between(alpha, low, high, color=colour, alpha=0.25, label=label)
        ax.plot(alpha, low, color=colour, lw=1)
        ax.plot(alpha, high, color=colour, lw=1)
    ax.set_xlabel("false alarm $P_{FA}$")
    ax.set_ylabel("missed detection $P_{MD}$")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_aspect("equal")
    ax.set_title(f"{k}-fold composition of ({epsilon:g}, {delta:g})-DP")
    ax.legend(loc="upper right", fontsize=8)
    path = pathlib.Path(path)
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)
    return path
