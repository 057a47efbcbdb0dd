"""Where a live run ran: the ``topology`` section of ``results.json`` and :attr:`mpdp.Simulation.topology`.

The ``inputs`` of a run say what it computes; its topology says where and how it ran: the parties' broker (and the
observer's, when it was another), the executor of the parties' workers, their MQTT connections (and why, for
``auto``), how many worker and validator processes. None of it is an input a resumed run must repeat (a resumed
run may use another broker: :attr:`mpdp.parties.api.simulation_config.SimulationConfig.NOT_RECORDED`): it is a
section of its own, of the run that wrote the document. No URL holds a password (:func:`mpdp.broker.settings.redact_url`
on the broker's URL, which leaves it out already).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from mpdp.broker.launch import external_endpoint
from mpdp.broker.settings import BrokerSettings, redact_url
from mpdp.parties.rounds.config import RunConfig

__all__ = ["Topology"]


@dataclass(frozen=True)
class Topology:
    """Where a live run ran (module docstring).

    Attributes:
        party_broker: the URL of the broker the parties published on (``mqtt://127.0.0.1:PORT``; ``embedded`` or
            ``mosquitto`` before the run started one), without a password.
        observer_broker: the observer's broker when it was not the parties' (``party_broker=``), else None.
        executor: ``local`` (worker processes on this machine) or ``dask://HOST:PORT`` (tasks on that cluster).
        connections: ``per-party`` or ``per-worker``, as used; connections_reason: why (``asked for``, or the
            reason ``auto`` chose it: :func:`mpdp.parties.session.estimate.choose_connections`).
        workers: the worker processes (or Dask tasks) the parties ran in, min(workers, parties).
        validators: the processes that verified the parties' messages for the observer (0: the observer itself).
    """

    party_broker: str
    observer_broker: str | None
    executor: str
    connections: str
    connections_reason: str
    workers: int
    validators: int

    @classmethod
    def of_run(cls, config: RunConfig, connections_reason: str, observer_broker: str | None = None) -> Topology:
        """The topology of ``config``, whose observer used the broker at ``observer_broker`` (the URL of the one the
        run started or reached; None: ``config.broker``'s URL, or its kind when the run starts its own); the parties
        used ``config.party_broker`` when given, else the same."""
        assert config.workers is not None  # RunConfig resolves None to default_workers()
        observer = redact_url(observer_broker if observer_broker is not None else _url(config.broker))
        party = None if config.party_broker is None else redact_url(_url(config.party_broker))
        return cls(party_broker=party or observer, observer_broker=None if party is None else observer,
                   executor=config.executor or "local", connections=config.connections,
                   connections_reason=connections_reason, workers=min(config.workers, config.k),
                   validators=config.validators)

    @classmethod
    def from_json(cls, section: Mapping[str, Any]) -> Topology:
        """The ``topology`` section of a results document.

        Raises:
            KeyError: a field missing (a document of an mpdp without the section).
        """
        return cls(**{name: section[name] for name in cls.__dataclass_fields__})

    def to_json(self) -> dict[str, Any]:
        """The ``topology`` section (JSON types, field order)."""
        return asdict(self)


def _url(settings: BrokerSettings) -> str:
    """``scheme://[user@]host:port[/path]`` of an external broker (no password, no options), else its kind."""
    endpoint = external_endpoint(settings)
    return settings.kind if endpoint is None else endpoint.url
