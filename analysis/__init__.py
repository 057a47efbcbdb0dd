"""Theory and statistics over protocols: exact accuracy, composition, accounting, audits, reports.

Pure like ``protocols`` (no asyncio, no network); writes files only where a caller asks for a report.
"""

from analysis.central_vs_distributed import (
    CentralVersusDistributed,
    compare_majority,
    plot_comparison,
)
from analysis.stats import Consistency, clopper_pearson, consistency_test
from analysis.theory import AccuracyOnInput, observer_accuracy_on_input

__all__ = [
    "CentralVersusDistributed",
    "compare_majority",
    "plot_comparison",
    "AccuracyOnInput",
    "Consistency",
    "clopper_pearson",
    "consistency_test",
    "observer_accuracy_on_input",
]
