"""Pydantic models of the top level of every JSON document mpdp writes, and their JSON Schemas.

Each document starts with the header of :func:`mpdp.analysis.reports.documents.versioned` (``schema_version``,
``mpdp_version``, ``kind``, ``inputs``); :data:`DOCUMENTS` maps each kind to a model of its top-level keys
(loose inside: ``extra="allow"``, nested values are plain JSON). ``DOCUMENTS[kind].model_validate(doc)``
checks a document; :func:`json_schemas` gives the JSON Schemas that ``mpdp schema --out schemas/`` writes
and that are committed under ``schemas/`` (a test checks they equal what the models give now).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from mpdp.analysis.reports.documents import KINDS, SCHEMA_VERSION

__all__ = ["DOCUMENTS", "Document", "json_schemas", "validate_document"]


class Document(BaseModel):
    """The header every document has; a kind's model adds its top-level keys (the rest is allowed)."""

    model_config = ConfigDict(extra="allow")

    schema_version: int
    mpdp_version: str
    kind: str
    inputs: dict[str, Any]


class AccuracyDocument(Document):
    """``mpdp accuracy --json`` / ``mpdp.accuracy(...).to_dict()``."""

    k: int
    function: str
    engine: str
    rules: dict[str, Any]


class ComposeDocument(Document):
    """``mpdp compose --json`` / ``mpdp.compose(...).to_dict()`` (``plot`` alone: no ``k``)."""

    k: int | None = None
    bounds: dict[str, Any] | None = None


class MechanismDocument(Document):
    """``mpdp mechanism --json`` / ``mpdp.mechanism(...).to_dict()``."""

    graph: Any = None


class EstimateDocument(Document):
    """``mpdp.estimate(...).to_dict()`` (the Monte Carlo engine)."""


class RunRound(BaseModel):
    """One round's status in a run's ``run`` section: decided (its status in the transcript) or not run."""

    round: int
    name: str
    status: Literal["complete", "timeout", "failed", "no-answers", "not run"]


class RunSection(BaseModel):
    """The ``run`` section of ``results.json`` (:mod:`mpdp.parties.api.run_folder`): ``running`` while the
    run goes on, then ``complete``, ``failed`` or ``interrupted``; the run's folder, the error, each
    round's status, how to continue (``resume``, None once complete) and the SHA-256 of the votes and
    the parties' levels that a resumed run checks (``data``)."""

    status: Literal["running", "complete", "failed", "interrupted"]
    folder: str
    error: str | None
    rounds_decided: int
    rounds: list[RunRound]
    resume: str | None
    data: str


class TopologySection(BaseModel):
    """The ``topology`` section of ``results.json`` (:class:`mpdp.parties.api.topology.Topology`): where the run ran,
    not an input (a resumed run may change it). URLs hold no password."""

    party_broker: str
    observer_broker: str | None
    executor: str
    connections: Literal["per-party", "per-worker"]
    connections_reason: str
    workers: int
    validators: int


class SimulateDocument(Document):
    """``mpdp simulate --json`` / ``results.json`` / ``mpdp.simulate(...).to_dict()``. ``rounds`` holds each
    round's results once the run is complete (empty while ``run.status`` is ``running``, ``failed`` or
    ``interrupted``: ``run.rounds`` has each round's status then). ``topology`` is where the run ran (absent in
    the documents of an mpdp before it)."""

    session: str
    protocol: str
    rounds: list[dict[str, Any]]
    topology: TopologySection | None = None
    run: RunSection


class SweepPointEntry(BaseModel):
    """One point of a sweep (:class:`mpdp.analysis.sweeps.sweep.SweepPoint`; the other fields are allowed)."""

    model_config = ConfigDict(extra="allow")

    epsilon: float
    rule: str
    observer: str
    theoretical_accuracy: float
    empirical_accuracy: float
    ci_low: float
    ci_high: float
    consistent: bool
    curator_accuracy: float | None


class SweepDocument(Document):
    """``mpdp sweep --json`` / ``sweep.json`` / ``mpdp.sweep(...).to_dict()``: ``source`` says how the
    points were measured (the Monte Carlo engine, or live sessions over a broker)."""

    source: Literal["monte-carlo", "live"]
    alpha: float
    consistent: bool
    points: list[SweepPointEntry]


class CompareCentralDocument(Document):
    """``mpdp compare-central --json``: one row per (voters, epsilon)."""

    rows: list[dict[str, Any]]
    plot: str | None = None


class CompareDocument(Document):
    """``mpdp compare --json``: rr, curator and mpc side by side."""


class ReportDocument(Document):
    """``mpdp report --json``: the files written."""

    rows: int
    html: str


class FiguresDocument(Document):
    """``mpdp figures --json``: the files written."""

    out: str
    figures: Any


class CalibrateDocument(Document):
    """``mpdp calibrate --json``: the noise plan."""


class Theorem31Document(Document):
    """``mpdp theorem-3-1 --json``."""


class SchemaDocument(Document):
    """``mpdp schema --json``: the JSON Schema files written."""

    out: str
    files: list[str]


class ExportDocument(Document):
    """``mpdp export --json``: the long-form transcript file written."""

    path: str
    format: str
    rows: int
    sessions: list[str]


class VerifyDocument(Document):
    """``mpdp verify --json``: a run's stored answers checked against its roster's public keys."""

    store: str
    session: str
    parties: int
    rounds: int
    keys: str
    answers: int
    proven: bool
    failure: str | None
    not_proven: str


class AuditDocument(Document):
    """``mpdp audit --json`` / ``mpdp.audit(...).to_dict()``: the certified lower bound on epsilon."""

    epsilon_configured: float | str
    epsilon_lower_bound: float | str
    violation: bool
    samples: int
    alpha: float


class ObserveDocument(Document):
    """``decisions.json`` / ``mpdp observe --json``: a deployed session's decisions, per round, and each
    party's privacy spent by the transcript. ``mode``: how the parties drew their noise; ``broker``: its URL
    (password hidden); ``store``: the SQLite transcript."""

    session: str
    protocol: str
    mode: str
    function: str
    repetitions: int
    broker: str
    store: str
    rounds: list[dict[str, Any]]
    privacy: dict[str, Any]


class DeploymentDocument(Document):
    """``mpdp keys``, ``party``, ``broker``, ``mpc-server`` with ``--json``: what the command wrote
    or did."""


#: Each document kind (a command's name) -> its model.
DOCUMENTS: dict[str, type[Document]] = {
    "accuracy": AccuracyDocument,
    "compose": ComposeDocument,
    "mechanism": MechanismDocument,
    "estimate": EstimateDocument,
    "simulate": SimulateDocument,
    "sweep": SweepDocument,
    "compare-central": CompareCentralDocument,
    "compare": CompareDocument,
    "report": ReportDocument,
    "figures": FiguresDocument,
    "calibrate": CalibrateDocument,
    "theorem-3-1": Theorem31Document,
    "keys": DeploymentDocument,
    "party": DeploymentDocument,
    "observe": ObserveDocument,
    "broker": DeploymentDocument,
    "schema": SchemaDocument,
    "export": ExportDocument,
    "audit": AuditDocument,
    "mpc-server": DeploymentDocument,
    "verify": VerifyDocument,
}


def json_schemas() -> dict[str, dict[str, Any]]:
    """Each kind's JSON Schema (draft 2020-12, pydantic's ``model_json_schema``): file name -> schema.

    The file name is ``<kind>.schema.json``; the schema's ``title`` is the kind. ``mpdp schema --out DIR``
    writes them; the committed ``schemas/`` must equal them (a test checks).
    """
    schemas: dict[str, dict[str, Any]] = {}
    for kind in KINDS:
        model = DOCUMENTS[kind]
        schema = model.model_json_schema()
        schema["title"] = kind
        schema["description"] = f"{schema.get('description', kind)} (schema_version {SCHEMA_VERSION})"
        schema["properties"]["kind"]["const"] = kind
        schema["properties"]["schema_version"]["const"] = SCHEMA_VERSION
        schemas[f"{kind}.schema.json"] = schema
    return schemas


def validate_document(document: dict[str, Any]) -> Document:
    """Check ``document`` against the model of its ``kind``; return the parsed model.

    Raises:
        pydantic.ValidationError: a missing or mistyped top-level key (names it).
        KeyError: no ``kind``, or a kind that is not in :data:`DOCUMENTS`.
        ValueError: a ``schema_version`` other than :data:`mpdp.analysis.reports.documents.SCHEMA_VERSION`.
    """
    model = DOCUMENTS[document["kind"]].model_validate(document)
    if model.schema_version != SCHEMA_VERSION:
        raise ValueError(f"schema_version={model.schema_version} is not allowed: {SCHEMA_VERSION} (this mpdp)")
    return model
