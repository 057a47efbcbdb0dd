"""Every figure of the three papers, by name, drawn from computation (``mpdp figures`` writes them).

=========================  ==================================================================  ====================
name                       what                                                                 drawn by
=========================  ==================================================================  ====================
``000-fig1-region``        R(eps, delta) (000 Figure 1)                                         composition_plot
``000-fig2-composition``   Theorem 3.3 regions, k = 1..5 (000 Figure 2)                         composition_plot
``000-fig3-theorems``      Theorems 3.1, 3.2, 3.3 at 30-fold (0.1, 0.001) (000 Figure 3)        composition_plot
``001-fig1-majority``      majority of 3 voters and its (2, 2)-line, balanced mechanism         graph_figures
``001-fig2-pullback``      Fig. 2 graph, its (3, 4)-line, the Theorem 3 pullback (1/13)         graph_figures
``001-thm2-example``       Theorem 2 on the Fig. 2 graph, B_h = 0.6, B_l = 0.7, (log 2, 0.1)    graph_figures
``001-infeasible``         the same boundary at (log 1.1, 0): infeasible, violated edge         graph_figures
``001-fig3-line``          the (4, 3)-line, Theorem 4 closed form (001 Fig. 3)                  graph_figures
``002-xor``                XOR accuracy against k (Corollary 3.1) and the collaborative curve   this module
``002-sum-debiased``       sum of 10: optimal rule (eq. (5)) against the debiased count         debiased
=========================  ==================================================================  ====================

Each builder takes no argument (the papers' parameters, written in each title) and returns a Figure.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from mpdp.analysis.figures import composition_plot, graph_figures
from mpdp.analysis.plot_style import COLORS, eps_delta, new_axes
from mpdp.analysis.theory.debiased import figure_debiased
from mpdp.protocols.decision.closed_forms import collaborative_xor_accuracy, corollary_3_1

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["PAPER_FIGURES", "figure_xor"]


def figure_xor(epsilons: Sequence[float] = (0.5, 1.0, 2.0), k_max: int = 12, ax: Axes | None = None) -> Figure:
    """002 Corollary 3.1: the optimal XOR accuracy of k parties (randomized response, optimal rule) against
    k, one line per epsilon (gid ``xor:<eps>``), next to the collaborative accuracy lambda / (1 + lambda)
    (the parties compute the XOR first and release it once; gid ``collaborative:<eps>``). The legend sits
    below the axes, where it hides no curve."""
    figure, ax = new_axes(ax, (6.5, 5.2))
    ks = np.arange(1, k_max + 1)
    for eps, color in zip(epsilons, COLORS, strict=False):
        ax.plot(ks, [corollary_3_1(int(k), eps) for k in ks], "o-", color=color, ms=4, gid=f"xor:{eps:g}",
                label=f"Corollary 3.1, {eps_delta(eps)}")
        ax.plot(ks, np.full(ks.size, collaborative_xor_accuracy(eps)), "--", color=color, gid=f"collaborative:{eps:g}",
                label=f"collaborative $\\lambda/(1+\\lambda)$, {eps_delta(eps)}")
    ax.axhline(0.5, color="gray", lw=0.8, ls=":", label="1/2: a coin toss")
    ax.set_xlabel("number of parties $k$")
    ax.set_ylabel("P(XOR correct), average = worst case")
    ax.set_title("002 Corollary 3.1: XOR of $k$ parties, $\\varepsilon \\in \\{"
                 + ", ".join(f"{e:g}" for e in epsilons) + "\\}$", fontsize=9)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2, frameon=False)
    return figure


#: Every figure of the three papers: name -> builder (see the module docstring).
PAPER_FIGURES: dict[str, Callable[[], Figure]] = {
    "000-fig1-region": composition_plot.figure_1,
    "000-fig2-composition": composition_plot.figure_2,
    "000-fig3-theorems": composition_plot.figure_3,
    "001-fig1-majority": graph_figures.figure_1_majority,
    "001-fig2-pullback": graph_figures.figure_2_pullback,
    "001-thm2-example": graph_figures.figure_theorem_2,
    "001-infeasible": graph_figures.figure_infeasible,
    "001-fig3-line": graph_figures.figure_3_line,
    "002-xor": figure_xor,
    "002-sum-debiased": figure_debiased,
}
