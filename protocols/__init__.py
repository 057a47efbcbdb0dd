"""Pure mathematics of multi-party differential privacy: mechanisms, functions, decision rules.

No I/O, no asyncio, no network: numbers and numpy arrays in, numbers and numpy arrays out.
"""

from protocols.errors import (
    DatasetError,
    MpdpError,
    ParameterError,
    ProtocolViolation,
    SizeLimitError,
    SolverError,
    TransportError,
)
from protocols.functions import (
    FUNCTION_NAMES,
    MEASURE_NAMES,
    BooleanFunction,
    SymmetricFunction,
    TruthTable,
    accuracy_measure,
    parse_function,
)
from protocols.closed_forms import (
    collaborative_xor_accuracy,
    corollary_3_1,
    xor_accuracy,
    xor_high_privacy_expansion,
)
from protocols.engines import DecisionProblem, build_problem
from protocols.optimal import OptimalRules, RuleReport, optimal_rules
from protocols.rules import DecisionRule
from protocols.worst_case import WorstCaseSolution, solve_worst_case
from protocols.secure import realized_epsilon, sample_secure, secure_bernoulli
from protocols.symmetric import SymmetricAverageRule, count_posterior, observer_average_rule
from protocols.mechanisms import (
    RandomizedResponse,
    check_delta,
    check_epsilon,
    posterior_table,
    sample_protocol,
)

__all__ = [
    "DecisionProblem",
    "DecisionRule",
    "OptimalRules",
    "RuleReport",
    "WorstCaseSolution",
    "build_problem",
    "collaborative_xor_accuracy",
    "corollary_3_1",
    "optimal_rules",
    "solve_worst_case",
    "xor_accuracy",
    "xor_high_privacy_expansion",
    "FUNCTION_NAMES",
    "MEASURE_NAMES",
    "BooleanFunction",
    "DatasetError",
    "MpdpError",
    "ParameterError",
    "ProtocolViolation",
    "RandomizedResponse",
    "SizeLimitError",
    "SolverError",
    "SymmetricAverageRule",
    "SymmetricFunction",
    "TransportError",
    "TruthTable",
    "accuracy_measure",
    "check_delta",
    "check_epsilon",
    "count_posterior",
    "observer_average_rule",
    "parse_function",
    "posterior_table",
    "realized_epsilon",
    "sample_protocol",
    "sample_secure",
    "secure_bernoulli",
]
