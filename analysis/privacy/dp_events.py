"""What mpdp composed, as a ``DpEvent`` of Google's dp_accounting (the optional extra ``mpdp[interop]``), so its
PLD or RDP accountants run on exactly the mechanisms mpdp composed.

An epsilon-DP release of mpdp is binary randomized response, which dominates every epsilon-DP mechanism (000
Theorem 2.5; the optimum of 000 Theorem 3.3 is attained by composing it). dp_accounting's
``RandomizedResponseDpEvent(noise_parameter=p, num_buckets=2)`` keeps the true bit with probability 1 - p and
draws a uniform one otherwise, so it tells the truth with probability ``1 - p/2``; equal to ``e^eps / (1 + e^eps)``
at ``p = 2 / (1 + e^eps)``. dp_accounting accounts randomized response under ``NeighborRel.REPLACE_ONE`` (a
party's bit replaced), the neighbouring relation of the papers. An (epsilon, delta > 0) release (000's
four-output randomized response) has no DpEvent in dp_accounting: it is refused, naming the alternative.

n releases at one epsilon are n ``RandomizedResponseDpEvent`` s in a ``ComposedDpEvent``, not one
``SelfComposedDpEvent(..., n)``: dp_accounting 0.6.0's ``PLDAccountant`` composes a self-composed randomized
response once, whatever its count (``pld_privacy_accountant.py`` has no ``self_compose(count)`` in that branch), and
would report the epsilon of one release for n (tests/analysis/test_dp_events.py pins it). Hence the limit
:data:`MAX_RELEASES`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import TYPE_CHECKING

from mpdp.protocols.errors import ParameterError, SizeLimitError

if TYPE_CHECKING:
    from dp_accounting import DpEvent

__all__ = ["INTEROP_EXTRA", "MAX_RELEASES", "dp_event", "randomized_response_noise"]

#: The optional extra that installs dp_accounting (``pip install 'mpdp[interop]'``).
INTEROP_EXTRA = "interop"
#: The most releases one DpEvent lists (one event each; the PLD accountant composes them one by one).
MAX_RELEASES = 100_000


def randomized_response_noise(epsilon: float) -> float:
    """dp_accounting's ``noise_parameter`` p of binary randomized response at ``epsilon`` (nats):
    ``p = 2 / (1 + e^epsilon)``, in [0, 1] (1 at epsilon = 0; 0 at epsilon = inf).

    Raises:
        ParameterError: epsilon negative or NaN.
    """
    if not epsilon >= 0.0:
        raise ParameterError("epsilon", epsilon, "a number in [0, inf] (nats)")
    return 2.0 / (1.0 + math.exp(epsilon)) if epsilon < 700.0 else 0.0


def dp_event(releases: Iterable[tuple[float, float, int]]) -> DpEvent:
    """The composition of ``releases`` as one dp_accounting ``DpEvent``.

    Args:
        releases: ``(epsilon, delta, count)`` triples: ``count`` >= 1 releases, each (epsilon, delta)-DP
            randomized response (epsilon in nats); equal epsilons are merged into one ``SelfComposedDpEvent``.

    Returns:
        One ``RandomizedResponseDpEvent(p, 2)`` per release (an infinite epsilon: ``NonPrivateDpEvent``), in a
        ``ComposedDpEvent`` when there are several, grouped by epsilon in order of first appearance.

    Raises:
        ParameterError: no release, a delta > 0 (dp_accounting has no event for it: build its PLD with
            ``dp_accounting.pld.privacy_loss_distribution.from_privacy_parameters``), a count < 1.
        SizeLimitError: more than :data:`MAX_RELEASES` releases.
        ImportError: dp_accounting is not installed (``pip install 'mpdp[interop]'``).
    """
    try:
        import dp_accounting
    except ImportError as exc:
        raise ImportError(f"to_dp_event() needs dp_accounting: pip install 'mpdp[{INTEROP_EXTRA}]'") from exc
    counts: dict[float, int] = {}
    for epsilon, delta, count in releases:
        if delta != 0.0:
            raise ParameterError(
                "delta", delta, "0: dp_accounting has no DpEvent for an (epsilon, delta > 0) mechanism "
                "(use dp_accounting.pld.privacy_loss_distribution.from_privacy_parameters)")
        if isinstance(count, bool) or int(count) != count or count < 1:
            raise ParameterError("count", count, "an integer >= 1")
        randomized_response_noise(epsilon)  # checks epsilon
        counts[float(epsilon)] = counts.get(float(epsilon), 0) + int(count)
    if not counts:
        raise ParameterError("releases", "none", "at least one (epsilon, delta, count) release")
    total = sum(counts.values())
    if total > MAX_RELEASES:
        raise SizeLimitError("releases", total, MAX_RELEASES, (
            "compose dp_accounting's PLD directly: pld.privacy_loss_distribution.from_randomized_response(p, 2, "
            "neighboring_relation=REPLACE_ONE).self_compose(n)"))
    events: list[DpEvent] = []
    for epsilon, count in counts.items():
        single: DpEvent = (dp_accounting.NonPrivateDpEvent() if math.isinf(epsilon) else
                           dp_accounting.RandomizedResponseDpEvent(noise_parameter=randomized_response_noise(epsilon),
                                                                   num_buckets=2))
        events += [single] * count
    return events[0] if len(events) == 1 else dp_accounting.ComposedDpEvent(events=events)
