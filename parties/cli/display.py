"""Terminal output of ``mpdp simulate``: the results table and its summary lines (its progress bars:
:mod:`mpdp.parties.session.progress`)."""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from rich.console import Console, JustifyMethod
from rich.table import Table

from mpdp.analysis.reports.evaluation import PartyEvaluation
from mpdp.analysis.reports.report import RoundResult
from mpdp.analysis.theory.debiased import DebiasedRound

__all__ = ["party_summary", "print_results", "truth_text"]


def truth_text(function: str, truth: int) -> str:
    """A decision or true value as the table shows it: passed/failed for majority, else the number."""
    if function.lower() in ("majority", "passed"):
        return "passed" if truth else "failed"
    return str(truth)


def print_results(document: Mapping[str, Any], results: Sequence[RoundResult],
                  rr_theory: Sequence[float] | None = None,
                  debiased: Sequence[DebiasedRound | None] | None = None,
                  decided: Sequence[bool] | None = None) -> None:
    """Print the per-round table and a one-line summary to standard output.

    ``rr_theory`` (curator protocol): per round, the randomized-response protocol's exact accuracy at
    the same epsilon, shown in an extra column. ``debiased`` (randomized response, ``sum``): per round,
    the debiased count with its interval, shown in an extra column with a footnote."""
    # a pipe or a file gets the full table instead of rich's 80-column default
    console = Console(file=sys.stdout, width=None if sys.stdout.isatty() else 132)
    function = str(document["function"])
    central = {"curator": "curator releases", "mpc": "compute servers release in MPyC"}.get(str(document["protocol"]),
                                                                                         "curator releases")
    mechanism = "geometric mechanism, 000" if document.get("rule") == "geometric" else "optimal central mechanism"
    who = "observer computes" if rr_theory is None else f"{central} ({mechanism})"
    table = Table(title=f"{document['dataset']}: {who} {function} "
                        f"({document['repetitions']} repetitions per round)")
    columns: list[tuple[str, JustifyMethod]] = [("round", "left"), ("voting", "right"), ("yes", "right"), ("truth", "left"),
               ("measured [95% CI]", "right"), ("theory", "right"), ("consistent", "center")]
    if rr_theory is not None:
        columns.append(("rr theory", "right"))
    shown = [d for d in debiased or () if d is not None]
    if shown:
        columns.append(("debiased count [CI]", "right"))
    for name, justify in columns:
        table.add_column(name, justify=justify)
    for i, r in enumerate(results):
        theory = (f"{r.theoretical_accuracy:.4f}" + ("" if r.theory_exact else " (est.)")
                  + (f" (tie {r.tie_probability:.0%})" if r.tie_probability > 0 else ""))
        measured = decided is None or decided[i]  # an undecided round (no answer, every party abstained): dashes
        row = [r.round, str(r.n_parties), str(r.yes_count), truth_text(function, r.truth),
               f"{r.empirical_accuracy:.3f} [{r.ci_low:.3f}, {r.ci_high:.3f}]" if measured else "- (not decided)",
               theory, ("yes" if r.consistent else "[bold red]NO[/]") if measured else "-"]
        if rr_theory is not None:
            row.append(f"{rr_theory[i]:.4f}")
        if shown:
            row.append(_debiased_cell(debiased[i] if debiased is not None else None))
        table.add_row(*row)
    console.print(table)
    if shown:
        console.print(_debiased_note(shown))
    if any(r.tie_probability > 0 for r in results):
        console.print("(tie P%): the observer's posterior tied on P% of the transcripts (at epsilon = 0 on all); "
                      "the rule is deterministic and answers 0 there, so a tied round's theory counts only "
                      "the answer 0 (docs/guide/accuracy.md).")
    if rr_theory is not None and results:
        console.print(
            f"mean accuracy over rounds: {document['protocol']} (theory) {sum(r.theoretical_accuracy for r in results) / len(results):.4f}, "
            f"randomized response (theory) {sum(rr_theory) / len(rr_theory):.4f}, at the same epsilon per party.")
    counted = [r for i, r in enumerate(results) if decided is None or decided[i]]
    consistent = sum(r.consistent for r in counted)
    undecided = len(results) - len(counted)
    broker = document["broker"]
    assert isinstance(broker, dict)
    console.print(
        f"{consistent}/{len(counted)} {'decided ' if undecided else ''}rounds consistent with theory "
        + (f"({undecided} not decided: no answer, or every party abstained; " if undecided else "(")
        + "exact binomial tests, "
        f"family-wise alpha {document['alpha']}, Bonferroni); broker: {broker['kind']} "
        f"{broker['url']}; {float(document['wall_time_s']):.1f} s on the wire."
    )
    console.print(f"[dim]{document['note']}[/]")


def _debiased_cell(d: DebiasedRound | None) -> str:
    if d is None:
        return "-"
    low, high = d.pooled.interval
    return f"{d.pooled.estimate:.2f} [{low:.2f}, {high:.2f}]" + ("" if d.covered else " [bold red]misses[/]")


def _debiased_note(shown: Sequence[DebiasedRound]) -> str:
    """The footnote of the debiased column: what it is, how often it covered, who was left out."""
    level = shown[0].pooled.confidence
    left_out = sorted({i for d in shown for i in d.pooled.excluded})
    note = (f"debiased count: sum of (y_i - q_i) / (p_i - q_i), the unbiased estimate local-DP tools report, "
            f"pooled over the repetitions, normal interval at level {level:g} (1 - alpha); it covers the true "
            f"count in {sum(d.covered for d in shown)}/{len(shown)} rounds. Its rounded, clipped value "
            f"(post-processed, no longer unbiased) is in the JSON (debiased.post_processed).")
    if left_out:
        note += f" Left out (epsilon 0, or below 1e-154: no finite-variance estimate): parties {', '.join(map(str, left_out))}."
    return note


def party_summary(parties: Sequence[PartyEvaluation], rule: str) -> str:
    """One line: the parties' mean measured accuracy over the rounds, its exact theory, the 002 law
    check and the missing decision messages."""
    measured = [p.accuracy for p in parties if p.accuracy is not None]
    theory = [p.theoretical_accuracy for p in parties if p.theoretical_accuracy is not None]
    missing = sum(p.decisions_missing for p in parties)
    law = [p.law_holds for p in parties if p.law_holds is not None]
    text = f"parties' own decisions ({rule} rules): "
    text += f"mean measured accuracy {np.mean(measured):.4f}" if measured else "none received"
    if theory:
        text += f", exact theory {np.mean(theory):.4f}"
    if law:
        text += f"; every party rule's {rule} accuracy >= the observer's in {sum(law)}/{len(law)} rounds"
    return text + (f"; {missing} party decision messages missing" if missing else "")
