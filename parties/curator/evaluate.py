"""The curator protocol in ``mpdp simulate --protocol curator``: argument checks before anything
starts, and the per-round evaluation (measured accuracy against the curator's exact theory, with the
randomized-response protocol's exact theory at the same epsilon beside it)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from mpdp.analysis.central_vs_distributed import curator_accuracy_on_input
from mpdp.analysis.report import RoundResult, evaluate_decisions
from mpdp.analysis.theory import observer_accuracy_on_input
from mpdp.parties.rounds.outcome import RunOutcome
from mpdp.protocols.errors import ParameterError
from mpdp.protocols.functions import BooleanFunction, accuracy_measure
from mpdp.protocols.mechanisms import RandomizedResponse

__all__ = ["check_curator_arguments", "evaluate_curator_rounds"]


def check_curator_arguments(function: BooleanFunction, epsilon_spec: str) -> None:
    """Refuse what the curator protocol cannot do, naming the alternative.

    Raises:
        ParameterError: a function other than majority/passed, or ``--epsilon`` given as LO:HI or a
            file (the curator's mechanism has one (epsilon, delta) for every vote).
    """
    if function.name != "majority":
        raise ParameterError("--function", function.name,
                             "majority or passed with --protocol curator (the optimal central mechanism "
                             "is for a binary function)", hint="other functions: --protocol rr")
    if ":" in epsilon_spec or Path(epsilon_spec).is_file():
        raise ParameterError("--epsilon", epsilon_spec,
                             "one value with --protocol curator (the same epsilon and --delta for every "
                             "party)", hint="per-party levels: --protocol rr")


def evaluate_curator_rounds(
    outcome: RunOutcome, bits: np.ndarray, mechanisms: Sequence[RandomizedResponse],
    function: BooleanFunction, *, alpha: float, rng: np.random.Generator,
) -> tuple[list[RoundResult], list[float]]:
    """Each round's released outputs against the majority of the true votes of its participants.

    Args:
        outcome: the curator run (``decisions`` are the releases); bits: int8 (k, R), the dataset's votes; mechanisms: the k parties' (equal)
            privacy levels; alpha: family-wise level of the consistency tests (Bonferroni).
        rng: for the randomized-response theory's Monte Carlo fallback (not used when exact).

    Returns:
        (one :class:`RoundResult` per round, with the curator's exact theory from
        :func:`mpdp.analysis.central_vs_distributed.curator_accuracy_on_input`; per round the exact
        accuracy of the randomized-response protocol on the same votes at the same (epsilon, delta),
        from :func:`mpdp.analysis.theory.observer_accuracy_on_input`).
    """
    epsilon, delta = mechanisms[0].epsilon, mechanisms[0].delta
    zero_one = accuracy_measure("zero-one", 2)
    results, rr_theory = [], []
    for j, rnd in enumerate(outcome.rounds):
        ids = rnd.participants
        x = bits[ids, j].astype(np.int64)
        results.append(evaluate_decisions(
            rnd.name, x, rnd.decisions, function, curator_accuracy_on_input(x, epsilon, delta),
            rounds=len(outcome.rounds), alpha=alpha, messages_received=rnd.messages_received,
            messages_rejected=rnd.messages_rejected))
        rr = observer_accuracy_on_input([mechanisms[i] for i in ids], x, function, zero_one, rng=rng)
        rr_theory.append(rr.value)
    return results, rr_theory
