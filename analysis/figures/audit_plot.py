"""The figure of a privacy audit: measured (false alarm, missed detection) points against the regions.

The points are the audit's threshold tests S+_t (:mod:`mpdp.analysis.privacy.audit`) with their one-sided
Clopper-Pearson bounds as error bars, drawn over 000 Figure 3's regions for the party's K-fold release
(Theorem 3.1 basic composition, Theorem 3.2 DRV, Theorem 3.3 exact; for K = 1 the single region
R(epsilon, delta)). A correct party's points stay inside the exact region, up to their error bars.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mpdp.analysis.figures.composition_plot import draw_region, figure_3, finish_plane
from mpdp.analysis.plot_style import COLORS, eps_delta, new_axes
from mpdp.analysis.privacy.audit import AuditEstimate
from mpdp.analysis.privacy.privacy_region import dp_region

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["plot_audit"]


def plot_audit(estimate: AuditEstimate, ax: Axes | None = None) -> Figure:
    """Draw the audit's measured points (gid ``measured``) over the privacy regions; returns the Figure."""
    title = (f"audit: {estimate.releases}-fold release at {eps_delta(estimate.epsilon, estimate.delta)}, "
             f"$N$ = {estimate.samples:,}; certified $\\varepsilon \\geq {estimate.epsilon_lower_bound:.4g}$")
    if estimate.releases > 1:
        figure = figure_3(estimate.epsilon, estimate.delta, estimate.releases, ax=ax)
        ax = figure.axes[0] if ax is None else ax
    else:
        figure, ax = new_axes(ax, (5.0, 5.0))
        draw_region(ax, dp_region(estimate.epsilon, estimate.delta), r"$R(\varepsilon, \delta)$", COLORS[0],
                    key="R(epsilon, delta)")
    alpha, beta = estimate.false_alarm, estimate.missed_detection
    ax.errorbar(alpha, beta, xerr=[alpha - estimate.false_alarm_bounds[0], estimate.false_alarm_bounds[1] - alpha],
                yerr=[beta - estimate.missed_detection_bounds[0], estimate.missed_detection_bounds[1] - beta],
                fmt="o", ms=3, color="black" if not estimate.violation else "tab:red", lw=0.8,
                label="measured tests" + (" (violation)" if estimate.violation else ""), gid="measured")
    return finish_plane(ax, title)
