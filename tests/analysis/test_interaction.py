"""002 Theorem 3.1 (000 §5.2 with delta): no random interactive protocol beats randomized response with
its optimal rule; a protocol that breaks its privacy budget does (so the check can fail)."""

from __future__ import annotations

import numpy as np
import pytest

from mpdp.analysis.theory.interaction import (
    compare_with_randomized_response,
    plot_margins,
    protocol_privacy,
    theorem_3_1_trials,
)
from mpdp.protocols.functions import accuracy_measure, parse_function
from mpdp.protocols.interactive.interactive import repeated_response


@pytest.mark.parametrize("k, trials, delta, seed", [(2, 150, 0.0, 20), (3, 120, 0.0, 30), (2, 40, 0.05, 40)])
def test_randomized_response_is_never_beaten(k: int, trials: int, delta: float, seed: int) -> None:
    margins = theorem_3_1_trials(k, trials, np.random.default_rng(seed), delta=delta)
    assert len(margins) == trials
    assert max(m.average for m in margins) <= 1e-12
    assert max(m.worst_case for m in margins) <= 1e-12
    # the check is not vacuous: most protocols lose by a visible amount
    assert np.median([m.average for m in margins]) < -1e-3
    assert {m.observer for m in margins} >= {None, 0, 1}


@pytest.mark.parametrize("name, k", [("majority", 3), ("sum", 2), ("and", 2)])
def test_non_private_protocol_beats_randomized_response(name: str, k: int) -> None:
    eps = [0.5, 1.0, 0.8][:k]
    function = parse_function(name)
    protocol = repeated_response(eps, rounds=2)  # twice the budget: each party answers twice
    spent, _ = protocol_privacy(protocol)
    np.testing.assert_allclose(spent, 2 * np.array(eps), rtol=1e-12)  # the exact check sees the violation
    margins = compare_with_randomized_response(protocol, function.truth_table(k),
                                               accuracy_measure("zero-one", function.output_size(k)), eps)
    assert margins.average > 1e-3 and margins.worst_case > 1e-3
    # at the privacy it really has, randomized response wins again
    fair = compare_with_randomized_response(protocol, function.truth_table(k),
                                            accuracy_measure("zero-one", function.output_size(k)), spent)
    assert fair.average <= 1e-12 and fair.worst_case <= 1e-12


def test_randomized_response_itself_has_margin_zero() -> None:
    eps = [0.3, 1.2, 0.7]
    function = parse_function("majority")
    margins = compare_with_randomized_response(repeated_response(eps, 1), function.truth_table(3), np.eye(2), eps,
                                               observer=1)
    assert abs(margins.average) <= 1e-14 and abs(margins.worst_case) <= 1e-9


def test_plot_margins_draws_the_margins() -> None:
    margins = theorem_3_1_trials(2, 5, np.random.default_rng(1))
    figure = plot_margins(margins, title="t")
    ax = figure.axes[0]
    heights = sum(p.get_height() for p in ax.patches)
    assert heights == 2 * len(margins)  # each margin counted once per histogram
    assert ax.get_title() == "t"
