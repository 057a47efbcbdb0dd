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
from protocols.mechanisms import (
    RandomizedResponse,
    check_delta,
    check_epsilon,
    posterior_table,
    sample_protocol,
)

__all__ = [
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
    "SymmetricFunction",
    "TransportError",
    "TruthTable",
    "accuracy_measure",
    "check_delta",
    "check_epsilon",
    "parse_function",
    "posterior_table",
    "sample_protocol",
]
