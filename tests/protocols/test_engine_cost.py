"""The symmetric engine's cost model (issue 23): no size cap, the banded likelihood's nonzeros and memory
estimated before it is built, parity views in product form; refusals name the estimate."""

from __future__ import annotations

import math
import time

import pytest

from mpdp.protocols.decision.engine_cost import BAND_ENTRY_BYTES, symmetric_rule_cost
from mpdp.protocols.decision.factors import banded_count_likelihood, likelihood_nonzeros
from mpdp.protocols.errors import CostLimitError
from mpdp.protocols.functions import parse_function
from mpdp.protocols.randomization.mechanisms import RandomizedResponse
from mpdp.protocols.rules.optimal import optimal_rules
from mpdp.protocols.rules.rule_factory import decision_rule
from mpdp.protocols.rules.symmetric import SymmetricAverageRule


def test_a_band_is_estimated_at_its_nonzeros_not_its_square() -> None:
    """A group of 2,500 (above PURE_GROUP_DENSE_MAX) at epsilon 8: its band's memory is BAND_ENTRY_BYTES a
    nonzero (the band built has within 20% of the nonzeros modelled: tests/protocols/test_large_groups.py), with
    four float64 tables of 2,501 x 2 besides, far below the dense 2,501^2 x 8 bytes."""
    model = likelihood_nonzeros(2500, RandomizedResponse(8.0))
    cost = symmetric_rule_cost([RandomizedResponse(8.0)] * 2500, parse_function("majority"))
    assert cost is not None
    assert cost.memory_bytes == pytest.approx(4 * 8 * 2501 * 2 + BAND_ENTRY_BYTES * model)
    assert cost.memory_bytes < 8 * 2501**2 / 10 and model == pytest.approx(banded_count_likelihood(2500, 8.0).nnz,
                                                                          rel=0.2)


def test_a_million_party_majority_is_refused_by_its_memory_estimate_and_the_observer_takes_the_posterior_rule(
) -> None:
    """No cap refuses 10^6 parties now: the estimate does. The band of 10^6 parties at epsilon 1 has ~1.5e10
    nonzeros (~15,000 a row), about 300 GB: optimal_rules refuses it at once, naming that estimate (nothing
    built), and the live observer's rule factory answers with the posterior rule, as it did above the cap."""
    mechanisms = [RandomizedResponse(1.0)] * 1_000_000
    majority = parse_function("majority")
    nonzeros = likelihood_nonzeros(1_000_000, mechanisms[0])
    assert 1.4e10 < nonzeros < 1.6e10
    started = time.process_time()
    with pytest.raises(CostLimitError, match=r"the exact rule \(1,000,000 parties, 2 outputs\) would take about "
                                             r".* and [0-9]+ GB, over .* of memory this machine can give now: the count engine"):
        optimal_rules(mechanisms, majority, [[1.0, 0.0], [0.0, 1.0]], rule="average")
    assert isinstance(decision_rule(mechanisms, majority), SymmetricAverageRule)
    assert time.process_time() - started < 30  # nothing of the band was built (its estimate: minutes)


def test_xor_of_a_million_parties_is_exact_in_product_form() -> None:
    """Parity views need no likelihood: 10^6 parties' XOR is estimated well under a second and computed
    exactly; its accuracy is 002 Corollary 3.1, (1 + tanh(eps / 2)^k) / 2 (0.77 at epsilon 15), to 1e-12."""
    mechanisms = [RandomizedResponse(15.0)] * 1_000_000
    xor = parse_function("xor")
    cost = symmetric_rule_cost(mechanisms, xor)
    assert cost is not None and cost.seconds < 1 and "parity product form" in cost.size
    rules = optimal_rules(mechanisms, xor, [[1.0, 0.0], [0.0, 1.0]], rule="average")
    expected = 0.5 * (1 + math.tanh(7.5) ** 1_000_000)
    assert rules.engine == "symmetric" and rules.average is not None and 0.7 < expected < 0.8
    assert rules.average.average_accuracy == pytest.approx(expected, abs=1e-12)
    assert rules.average.worst_case_accuracy == pytest.approx(expected, abs=1e-12)
