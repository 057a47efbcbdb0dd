"""Where a run's parties (and a sweep's points) run besides this machine: ``--executor dask://HOST:PORT``,
the address of a running Dask scheduler, checked at the edge (:func:`dask_address`, :func:`check_executor`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mpdp.broker.settings import BrokerSettings
from mpdp.protocols.errors import ParameterError

if TYPE_CHECKING:
    from distributed import Client

__all__ = ["DASK_ALLOWED", "check_executor", "dask_address", "dask_client"]

#: Seconds to reach the scheduler.
CONNECT_TIMEOUT = 10.0
#: What ``--executor`` accepts.
DASK_ALLOWED = "dask://HOST:PORT, the address of a running Dask scheduler"


def dask_address(url: str, option: str = "executor") -> str:
    """The scheduler's ``tcp://HOST:PORT`` of ``url`` = ``dask://HOST:PORT``.

    Raises:
        ParameterError: ``url`` is not ``dask://HOST:PORT`` (names ``option`` and the value).
    """
    scheme, sep, address = url.partition("://")
    host, colon, port = address.rpartition(":")
    if scheme != "dask" or not sep or not colon or not host or not port.isdigit():
        raise ParameterError(option, url, DASK_ALLOWED)
    return f"tcp://{address}"


def check_executor(executor: str | None, broker: BrokerSettings, party_broker: BrokerSettings | None) -> None:
    """Refuse an executor a live run cannot use: a malformed address, or a broker the Dask workers cannot
    reach (one this process starts: embedded, a mosquitto child, or ``auto``). None (local processes) passes.

    Raises:
        ParameterError: names the value and what is allowed.
    """
    if executor is None:
        return
    dask_address(executor)
    parties = party_broker or broker
    if parties.kind != "external":
        raise ParameterError(
            "executor", executor, f"a broker given by URL (mqtt://HOST:PORT, as the broker or the party broker) that "
            f"the Dask workers reach; the {parties.kind} broker this process starts serves this machine only")


def dask_client(url: str) -> Client:
    """A (synchronous) Dask client of the scheduler at ``url`` = ``dask://HOST:PORT``; the caller closes it.

    Raises:
        ParameterError: a malformed ``url``, the Dask extra not installed, or no scheduler answering within
            :data:`CONNECT_TIMEOUT` seconds.
    """
    address = dask_address(url)
    try:
        from distributed import Client
    except ImportError:
        raise ParameterError("executor", url, "the Dask extra installed (pip install 'mpdp[dask]')") from None
    try:
        return Client(address, timeout=CONNECT_TIMEOUT)
    except OSError as exc:
        raise ParameterError("executor", url, "a running Dask scheduler", hint=str(exc)[:200]) from None
