"""Pure mathematics of multi-party differential privacy: mechanisms, functions, decision rules.

No I/O, no asyncio, no network: numbers and numpy arrays in, numbers and numpy arrays out.
"""

from .colorings.coloring_mechanisms import (
    GraphMechanism,
    optimal_mechanism,
    privacy_violations,
)
from .colorings.coloring_steps import ColoringStep
from .colorings.domination import COMPARISONS, compare_mechanisms, truth_probability
from .colorings.graphs import ColoredGraph, line_graph, majority_hypercube
from .colorings.line_mechanisms import (
    MAX_LINE_NODES,
    LineMechanism,
    balanced_boundary_value,
    balanced_mechanism,
    boundary_homogeneous_mechanism,
    initial_behaviour,
    line_mechanism,
    terminal_behaviour,
    transition_parameter,
)
from .colorings.majority_mechanism import (
    MAX_CENTRAL_VOTERS,
    CentralMechanism,
    central_majority_mechanism,
    central_mechanism,
)
from .colorings.morphisms import (
    Morphism,
    boundary_distances,
    boundary_graph,
    boundary_morphism,
)
from .decision.closed_forms import (
    collaborative_xor_accuracy,
    corollary_3_1,
    xor_accuracy,
    xor_high_privacy_expansion,
)
from .decision.engines import DecisionProblem, build_problem
from .decision.worst_case import WorstCaseSolution, solve_worst_case
from .errors import (
    CertificateError,
    CostLimitError,
    DatasetError,
    MpdpError,
    ParameterError,
    ProtocolViolation,
    SizeLimitError,
    SolverError,
    TransportError,
    WorkerError,
)
from .functions import (
    FUNCTION_NAMES,
    MEASURE_NAMES,
    BooleanFunction,
    ErrorMeasure,
    SymmetricFunction,
    TruthTable,
    accuracy_measure,
    error_measure,
    parse_function,
)
from .interactive.interactive import (
    InteractiveProtocol,
    random_protocol,
    repeated_response,
    view_delta,
    view_epsilon,
)
from .interactive.transcript_rules import TranscriptAccuracy, transcript_accuracy
from .numerics.cost import DEFAULT_TIME_LIMIT, CostEstimate
from .randomization.mechanisms import (
    RandomizedResponse,
    check_delta,
    check_epsilon,
    posterior_table,
    sample_protocol,
)
from .randomization.secure import (
    realized_epsilon,
    sample_secure,
    secure_bernoulli,
    secure_choice,
)
from .rules.count_threshold import CountThresholdRule, count_threshold_rule
from .rules.optimal import OptimalRules, RuleReport, optimal_rules
from .rules.rule_factory import (
    RuleCache,
    check_rule_size,
    decision_rule,
    zero_one_measure,
    zero_one_rules,
)
from .rules.rules import RULE_KINDS, DecisionRule, RuleFactory
from .rules.symmetric import (
    SymmetricAverageRule,
    count_posterior,
    observer_average_rule,
)
from .rules.table_rule import TableRule

__all__ = [
    "COMPARISONS",
    "DEFAULT_TIME_LIMIT",
    "CostEstimate",
    "CostLimitError",
    "FUNCTION_NAMES",
    "MAX_LINE_NODES",
    "MAX_CENTRAL_VOTERS",
    "MEASURE_NAMES",
    "RULE_KINDS",
    "BooleanFunction",
    "CentralMechanism",
    "ColoredGraph",
    "ColoringStep",
    "DatasetError",
    "DecisionProblem",
    "ErrorMeasure",
    "CountThresholdRule",
    "count_threshold_rule",
    "DecisionRule",
    "GraphMechanism",
    "InteractiveProtocol",
    "LineMechanism",
    "Morphism",
    "MpdpError",
    "OptimalRules",
    "ParameterError",
    "ProtocolViolation",
    "RandomizedResponse",
    "RuleCache",
    "RuleFactory",
    "RuleReport",
    "SizeLimitError",
    "SolverError",
    "CertificateError",
    "SymmetricAverageRule",
    "SymmetricFunction",
    "TableRule",
    "TranscriptAccuracy",
    "TransportError",
    "TruthTable",
    "WorkerError",
    "WorstCaseSolution",
    "accuracy_measure",
    "error_measure",
    "balanced_boundary_value",
    "balanced_mechanism",
    "boundary_distances",
    "boundary_graph",
    "boundary_homogeneous_mechanism",
    "boundary_morphism",
    "build_problem",
    "central_majority_mechanism",
    "central_mechanism",
    "check_delta",
    "check_epsilon",
    "check_rule_size",
    "collaborative_xor_accuracy",
    "compare_mechanisms",
    "corollary_3_1",
    "count_posterior",
    "decision_rule",
    "initial_behaviour",
    "line_graph",
    "line_mechanism",
    "majority_hypercube",
    "observer_average_rule",
    "optimal_mechanism",
    "optimal_rules",
    "parse_function",
    "posterior_table",
    "privacy_violations",
    "random_protocol",
    "realized_epsilon",
    "repeated_response",
    "sample_protocol",
    "sample_secure",
    "secure_bernoulli",
    "secure_choice",
    "solve_worst_case",
    "terminal_behaviour",
    "transcript_accuracy",
    "transition_parameter",
    "truth_probability",
    "view_delta",
    "view_epsilon",
    "xor_accuracy",
    "xor_high_privacy_expansion",
    "zero_one_measure",
    "zero_one_rules",
]
