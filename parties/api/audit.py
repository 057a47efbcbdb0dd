"""``mpdp.audit``: a live privacy audit of a randomized-response party (issue 9 item 5).

Drives the party's real publishing path on bit 0 and bit 1 (:mod:`mpdp.parties.rr.audit`) and certifies a
lower bound on its epsilon with Clopper-Pearson bounds over every Neyman-Pearson threshold test
(:mod:`mpdp.analysis.privacy.audit`; 000 Section 2 and Theorem 3.3).

Example:
    >>> import mpdp
    >>> r = mpdp.audit(epsilon=1.0, samples=20_000, party_path="simulation", seed=3)
    >>> r.violation, 0.8 < r.epsilon_lower_bound <= 1.0
    (False, True)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mpdp.parties.api.result import Result, strict_document
from mpdp.parties.rr.audit import AuditRun, Progress, audit_party, parse_fault

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["Audit", "audit"]


@dataclass(frozen=True, repr=False)
class Audit(Result):
    """An audit (``mpdp audit --json``).

    Attributes:
        run: the measurement (:class:`mpdp.parties.rr.audit.AuditRun`).
        document: the ``--json`` document: ``epsilon_configured``, ``delta``, ``releases``,
            ``epsilon_composed`` (K epsilon), ``epsilon_lower_bound``, ``violation``, ``samples`` (per
            input), ``alpha``, ``tests``, ``party_path``, ``fault``, ``messages``, ``seconds``.
    """

    run: AuditRun
    document: dict[str, Any]

    @property
    def epsilon_lower_bound(self) -> float:
        """The epsilon the data certifies at level 1 - alpha (nats, for the K-fold release)."""
        return self.run.estimate.epsilon_lower_bound

    @property
    def violation(self) -> bool:
        """Whether the measured tests leave the configured guarantee (000 Theorem 3.3 for K releases)."""
        return self.run.estimate.violation

    def rows(self) -> Sequence[Mapping[str, Any]]:
        """One row per threshold test S+_t: measured false alarm and missed detection with their bounds."""
        e = self.run.estimate
        return [{"false_alarm": float(a), "false_alarm_high": float(e.false_alarm_bounds[1][i]),
                 "missed_detection": float(b), "missed_detection_low": float(e.missed_detection_bounds[0][i])}
                for i, (a, b) in enumerate(zip(e.false_alarm, e.missed_detection, strict=True))]

    def summary(self) -> str:
        e = self.run.estimate
        verdict = "VIOLATION" if e.violation else "within the configured guarantee"
        return (f"epsilon >= {e.epsilon_lower_bound:.4g} certified (configured {e.epsilon_composed:g} for "
                f"{e.releases} release(s)), N={e.samples:,}: {verdict}")

    def draw(self, ax: Axes | None) -> Figure:
        """The measured tests over the privacy regions (:func:`mpdp.analysis.figures.audit_plot.plot_audit`)."""
        from mpdp.analysis.figures.audit_plot import plot_audit

        return plot_audit(self.run.estimate, ax)


def audit(epsilon: float, delta: float = 0.0, samples: int = 100_000, *, releases: int = 1,
          party_path: str = "deployed", fault: str = "none", alpha: float = 0.05, seed: int | None = None,
          progress: Progress | None = None) -> Audit:
    """Audit a randomized-response party configured for (epsilon, delta) per release.

    Args:
        epsilon, delta: the configured level (nats; delta in [0, 1)).
        samples: N >= 1 outputs per input (bit 0 and bit 1 each).
        releases: K >= 1 releases per output (a K-repetition round).
        party_path: ``deployed`` (the CSPRNG sampler, ~100,000-170,000 draws/s) or ``simulation`` (seeded).
        fault: ``none``, or a planted fault ``double-epsilon`` / ``leak:R`` (to see the audit catch it).
        alpha: family-wise level of the certificate.
        seed: seeds the simulation path and a planted leak.
        progress: called with (outputs done, 2 N).

    Returns:
        :class:`Audit`.

    Raises:
        ParameterError: a value outside its domain.
    """
    run = audit_party(epsilon, delta, samples, releases=releases, party_path=party_path, fault=parse_fault(fault),
                      alpha=alpha, seed=seed, progress=progress)
    e = run.estimate
    document = {
        "epsilon_configured": e.epsilon, "delta": e.delta, "releases": e.releases,
        "epsilon_composed": e.epsilon_composed, "epsilon_lower_bound": e.epsilon_lower_bound,
        "violation": e.violation, "samples": e.samples, "alpha": e.alpha, "tests": e.tests,
        "party_path": run.party_path, "fault": str(run.fault), "messages": run.messages,
        "seconds": round(run.seconds, 3),
    }
    inputs = {"epsilon": epsilon, "delta": delta, "samples": samples, "releases": releases, "party_path": party_path,
              "fault": fault, "alpha": alpha, "seed": seed}
    return Audit(run, strict_document(document, "audit", inputs))
