"""Theory and statistics over protocols: exact accuracy, composition, accounting, audits, reports.

Pure like ``protocols`` (no asyncio, no network); writes files only where a caller asks for a report.
"""

from .figures.audit_plot import plot_audit
from .figures.composition_plot import figure_1, figure_2, figure_3, figure_3_regions
from .figures.paper_figures import PAPER_FIGURES, figure_xor
from .privacy.accounting import Budget, PrivacyLedger, RoundCharge, Spent
from .privacy.audit import AuditEstimate, audit_counts, audit_estimate, one_sided_clopper_pearson, release_scores
from .privacy.calibration import (
    PerQueryBudget,
    StaircaseNoise,
    corollary_4_1,
    gaussian_composition_delta,
    gaussian_composition_sigma,
    gaussian_sigma,
    gaussian_sigma_exact,
    laplace_scale,
    per_query_budget_exact,
)
from .privacy.calibration_plan import CalibrationPlan, NoiseChoice, calibration_plan
from .privacy.composition import (
    CompositionResult,
    compose_homogeneous,
    drv10_bound,
    eq7_bound,
    optimal_delta_slack,
    optimal_epsilon,
    randomized_response_loss,
    theorem_3_3_corners,
    theorem_3_4_bound,
)
from .privacy.geometric import GeometricMechanism
from .privacy.heterogeneous import compose_heterogeneous, discretized_bounds
from .privacy.post_processing import outside_point, post_processing_channel
from .privacy.privacy_loss import PrivacyLossDistribution
from .privacy.privacy_region import (
    PrivacyRegion,
    composition_region,
    dp_region,
    intersection,
)
from .reports.documents import KINDS, SCHEMA_VERSION, versioned
from .statistics.monte_carlo import CountTable, count_table, table_plan
from .statistics.stats import Consistency, clopper_pearson, consistency_test
from .sweeps.dataset_sweep import BillTheory, DatasetSweepPlan, bill_theory, dataset_sweep, plan_dataset_sweep
from .sweeps.grid import epsilon_grid
from .sweeps.sweep import SweepPoint, SweepResult
from .theory.accuracy import (
    RuleAccuracy,
    input_accuracy,
    monte_carlo_accuracy,
    rule_accuracy,
)
from .theory.central_vs_distributed import (
    CentralVersusDistributed,
    check_comparison_voters,
    compare_majority,
    curator_accuracy_on_input,
    curator_release_probability,
    plot_comparison,
)
from .theory.debiased import DebiasedRound, DebiasedSum, debiased_round, debiased_sum, figure_debiased
from .theory.interaction import (
    Margins,
    compare_with_randomized_response,
    plot_margins,
    protocol_privacy,
    theorem_3_1_trials,
)
from .theory.monte_carlo_cost import monte_carlo_cost
from .theory.observer_posterior import RoundPosterior, round_posterior
from .theory.theory import AccuracyOnInput, observer_accuracy_on_input

__all__ = [
    "AccuracyOnInput",
    "AuditEstimate",
    "BillTheory",
    "Budget",
    "CalibrationPlan",
    "CentralVersusDistributed",
    "CompositionResult",
    "Consistency",
    "CountTable",
    "DatasetSweepPlan",
    "DebiasedRound",
    "DebiasedSum",
    "GeometricMechanism",
    "KINDS",
    "Margins",
    "NoiseChoice",
    "PAPER_FIGURES",
    "PerQueryBudget",
    "PrivacyLedger",
    "PrivacyLossDistribution",
    "PrivacyRegion",
    "RoundCharge",
    "RoundPosterior",
    "RuleAccuracy",
    "SCHEMA_VERSION",
    "Spent",
    "StaircaseNoise",
    "SweepPoint",
    "SweepResult",
    "audit_counts",
    "audit_estimate",
    "bill_theory",
    "calibration_plan",
    "check_comparison_voters",
    "clopper_pearson",
    "compare_majority",
    "compare_with_randomized_response",
    "compose_heterogeneous",
    "compose_homogeneous",
    "composition_region",
    "consistency_test",
    "corollary_4_1",
    "count_table",
    "curator_accuracy_on_input",
    "curator_release_probability",
    "dataset_sweep",
    "debiased_round",
    "debiased_sum",
    "discretized_bounds",
    "dp_region",
    "drv10_bound",
    "epsilon_grid",
    "eq7_bound",
    "figure_1",
    "figure_2",
    "figure_3",
    "figure_3_regions",
    "figure_debiased",
    "figure_xor",
    "gaussian_composition_delta",
    "gaussian_composition_sigma",
    "gaussian_sigma",
    "gaussian_sigma_exact",
    "input_accuracy",
    "intersection",
    "laplace_scale",
    "monte_carlo_accuracy",
    "monte_carlo_cost",
    "observer_accuracy_on_input",
    "one_sided_clopper_pearson",
    "optimal_delta_slack",
    "optimal_epsilon",
    "outside_point",
    "per_query_budget_exact",
    "plan_dataset_sweep",
    "plot_audit",
    "plot_comparison",
    "plot_margins",
    "post_processing_channel",
    "protocol_privacy",
    "randomized_response_loss",
    "release_scores",
    "round_posterior",
    "rule_accuracy",
    "table_plan",
    "theorem_3_1_trials",
    "theorem_3_3_corners",
    "theorem_3_4_bound",
    "versioned",
]
