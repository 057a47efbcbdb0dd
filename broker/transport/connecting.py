"""One MQTT connect attempt of an aiomqtt client: fast and quiet when it fails.

* **Fast**: aiomqtt waits for the CONNACK until its timeout even when the connection is already gone. With
  TLS 1.3 the broker checks the client's certificate after the handshake, so a broker that requires one
  (mosquitto ``require_certificate true``) answers a client without it by the alert
  ``CERTIFICATE_REQUIRED``, which arrives in paho's read loop: paho logs it and closes the socket, and the
  connect would time out seconds later. :func:`enter` watches paho's ``on_disconnect`` and ``on_log``
  callbacks during the connect and fails at once with the cause (:class:`ClosedBeforeConnack`, a TLS alert
  named in words).
* **Quiet**: a client whose connect failed is dropped by :func:`discard` (its socket closed, no callback
  into aiomqtt's cancelled futures) rather than by aiomqtt's ``__aexit__``, which would warn "Could not
  gracefully disconnect". paho's and aiomqtt's own log records (:data:`CLIENT_LOG`) are lowered to DEBUG:
  what they report reaches the caller as one :class:`mpdp.protocols.errors.TransportError` line, and
  ``mpdp -vv`` still shows them.
* **Dead on arrival**: a connection the broker closes just after its CONNACK (another connection took its
  client id: mosquitto's ``use_username_as_clientid`` gives every connection of one login the same id) is
  lost inside aiomqtt's ``__aenter__``, which then replaces its disconnection future by a fresh one: the
  client looked connected forever, every subscribe failed with "not currently connected" and the process
  sat silent (and asyncio logged "Future exception was never retrieved"). :func:`enter` fails such an
  attempt (:data:`DEAD_ON_ARRIVAL`), so it is retried like any other.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import aiomqtt
from paho.mqtt.client import MQTT_LOG_ERR

__all__ = ["CLIENT_LOG", "DEAD_ON_ARRIVAL", "ClosedBeforeConnack", "discard", "enter", "retrieve"]

#: The logger given to every aiomqtt client (and through it to paho): its records are DEBUG records.
CLIENT_LOG = logging.getLogger("mpdp.transport.client")

#: The error of a connection the broker closed as soon as it accepted it (:func:`enter`).
DEAD_ON_ARRIVAL = "the broker closed the connection right after accepting it"
#: TLS alerts (OpenSSL reason names) in words; each one is final: retrying does not change the certificates.
_ALERTS = {
    "CERTIFICATE_REQUIRED": "the broker requires a client certificate: pass --cert/--key "
                            "(or $MPDP_BROKER_CERT/$MPDP_BROKER_KEY)",
    "UNKNOWN_CA": "the broker does not know the CA of this client's certificate (--cert)",
    "BAD_CERTIFICATE": "the broker refused this client's certificate (--cert)",
    "CERTIFICATE_EXPIRED": "the broker says this client's certificate (--cert) has expired",
}


def _as_debug(record: logging.LogRecord) -> bool:
    record.levelno, record.levelname = logging.DEBUG, "DEBUG"
    return CLIENT_LOG.isEnabledFor(logging.DEBUG)


CLIENT_LOG.addFilter(_as_debug)


class ClosedBeforeConnack(aiomqtt.MqttError):
    """The connection closed before the broker's CONNACK.

    Attributes:
        final: True for a TLS alert about the client's certificate (retrying cannot help).
    """

    def __init__(self, cause: str, final: bool) -> None:
        super().__init__(cause)
        self.final = final


def _closed(logged: list[str]) -> ClosedBeforeConnack:
    """The error for a connection closed before its CONNACK, from paho's last error line (if any)."""
    text = logged[-1] if logged else "the broker closed the connection before its CONNACK"
    for alert, words in _ALERTS.items():
        if f"ALERT_{alert}]" in text:
            return ClosedBeforeConnack(words, final=True)
    return ClosedBeforeConnack(text, final=False)


async def enter(client: aiomqtt.Client) -> None:
    """Connect ``client`` (``client.__aenter__()``, bounded by its own timeout), failing as soon as the
    connection closes before the CONNACK.

    Raises:
        ClosedBeforeConnack: the broker (or the network) closed the connection first; a TLS alert named.
        aiomqtt.MqttError, OSError: as ``__aenter__`` (refused, timed out, unreachable).
    """
    # aiomqtt's internals (pinned <3): its paho client (whose callbacks are public) and its connect future
    paho = client._client
    aiomqtt_on_disconnect = paho.on_disconnect
    logged: list[str] = []
    gone: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def on_log(_client: Any, _userdata: Any, level: int, text: str) -> None:
        if level == MQTT_LOG_ERR:
            logged.append(text)

    def on_disconnect(*args: Any) -> None:
        if not gone.done() and not client._connected.done():  # after a CONNACK, aiomqtt's answer stands
            gone.set_result(None)
        # aiomqtt's handler reads its connect future: not once that was cancelled (our timeout)
        if aiomqtt_on_disconnect is not None and not client._connected.cancelled():
            aiomqtt_on_disconnect(*args)

    paho.on_log, paho.on_disconnect = on_log, on_disconnect
    # a disconnection between the CONNACK and the end of __aenter__ sets this future, which __aenter__ then
    # replaces by a fresh one: nothing would read it (module docstring, "Dead on arrival")
    client._disconnected.add_done_callback(retrieve)
    entering = asyncio.ensure_future(client.__aenter__())
    entering.add_done_callback(retrieve)
    try:
        await asyncio.wait((entering, gone), return_when=asyncio.FIRST_COMPLETED)
    finally:
        if not entering.done():
            entering.cancel()
            await asyncio.wait((entering,))
    if entering.cancelled() or entering.exception() is not None:
        if gone.done():
            raise _closed(logged)
        try:
            entering.result()  # its error, or CancelledError
        finally:
            del entering  # that error's traceback holds this frame: no cycle back through the task
    paho.on_log, paho.on_disconnect = None, aiomqtt_on_disconnect
    if gone.done() or not paho.is_connected():
        raise ClosedBeforeConnack(DEAD_ON_ARRIVAL, final=False)


def retrieve(future: asyncio.Future[Any]) -> None:
    """Mark a finished aiomqtt future's error as retrieved (a done callback), where nothing else reads it:
    a connection attempt that failed just as :func:`enter` was cancelled (a timeout, a stop; "Connection
    refused" while the broker restarts), or a client's unexpected disconnection, which only its message
    iterator reads. Else asyncio logs it with a traceback ("... exception was never retrieved")."""
    if not future.cancelled():
        future.exception()


def discard(client: aiomqtt.Client) -> None:
    """Drop ``client`` after a failed :func:`enter`: close its socket (after a DISCONNECT if it is open)
    without calling back into aiomqtt, which has given up on it."""
    paho = client._client
    paho.on_log = paho.on_disconnect = None  # also breaks the cycle client -> callbacks -> client
    paho.disconnect()
