from .parties.api.accuracies import Accuracy, accuracy
from .parties.api.composition import Composition, compose
from .parties.api.estimates import Estimate, estimate
from .parties.api.mechanisms import Mechanism, mechanism
from .parties.api.result import Result
from .parties.api.simulation import Simulation, simulate, simulate_async

__version__: str

__all__ = [
    "Accuracy",
    "Composition",
    "Estimate",
    "Mechanism",
    "Result",
    "Simulation",
    "__version__",
    "accuracy",
    "compose",
    "estimate",
    "mechanism",
    "simulate",
    "simulate_async",
]
