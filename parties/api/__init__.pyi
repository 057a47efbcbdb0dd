"""The Python API of mpdp (``import mpdp``): functions that return typed, frozen results."""

from .accuracies import Accuracy, accuracy
from .audit import Audit, audit
from .composition import Composition, compose
from .estimates import Estimate, estimate
from .mechanisms import Mechanism, mechanism
from .reports import ReportFiles, report
from .result import Result
from .schemas import DOCUMENTS, validate_document
from .simulation import Simulation, simulate, simulate_async
from .simulation_config import SimulationConfig
from .sweeps import Sweep, sweep
from .topology import Topology

__all__ = [
    "DOCUMENTS",
    "Accuracy",
    "Audit",
    "Composition",
    "Estimate",
    "Mechanism",
    "ReportFiles",
    "Result",
    "Simulation",
    "SimulationConfig",
    "Sweep",
    "Topology",
    "accuracy",
    "audit",
    "compose",
    "estimate",
    "mechanism",
    "report",
    "simulate",
    "simulate_async",
    "sweep",
    "validate_document",
]
