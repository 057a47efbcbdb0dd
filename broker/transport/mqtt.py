"""The MQTT transport: one aiomqtt client that reconnects, resubscribes, times out and applies backpressure.

* Connect (and reconnect after a lost connection) for up to ``endpoint.reconnect_window`` seconds: attempts
  spaced by exponential backoff with full jitter (:class:`mpdp.broker.transport.backoff.Backoff`: 0.1 s
  doubling to 5 s, a random share of it, from the transport's own random source), each attempt bounded
  by ``endpoint.timeout``; then every wait raises one-line :class:`TransportError`. An attempt fails as
  soon as the connection closes before the CONNACK (a TLS alert: a broker that requires a client
  certificate says so at once), quietly (:mod:`mpdp.broker.transport.connecting`); a refused login or
  certificate is not retried. A broker down for minutes is waited for: publishes and subscribes made
  meanwhile wait for the new connection. The process logs one line when it loses its connection(s) and
  one when they are back (:mod:`mpdp.broker.transport.outage`); :attr:`MqttTransport.connected` and
  :attr:`MqttTransport.downtime` let callers pause their clocks while the broker is away.
* A connection taken over: a broker that closes the connection right after accepting it, or within
  :data:`TAKEOVER_SECONDS` of it, :data:`TAKEOVER_LIMIT` times in a row, has another connection with the same
  client id (mosquitto's ``use_username_as_clientid``, on the observer's listener of ``mpdp broker config``,
  gives every connection of a login one id: a party host pointed at that port kicked its own connections
  in turn, and sat silent). That is final: one TransportError line naming the client id and the login.
* The filters given to :meth:`MqttTransport.subscribe` are renewed on every new connection.
* Every network wait (connect, SUBACK, PUBACK) runs inside :func:`asyncio.timeout`; a publish or
  subscribe made while reconnecting waits for the new connection.
* Backpressure without drops: one reader task moves incoming messages into a bounded
  :class:`asyncio.Queue` (``endpoint.queue_size``) and sends the QoS 1 PUBACK (paho's manual
  acknowledgement) only once a message is in that queue. While the consumer lags, the reader waits,
  the broker's in-flight window of unacknowledged messages fills (MQTT 3.1.1 §4.3.2;
  ``max_inflight_messages`` in broker/mosquitto.conf, Receive Maximum in MQTT 5) and the broker keeps
  the rest queued for us, so memory here stays bounded and nothing is dropped.
* Cancellation is never lost: aiomqtt waits for the broker's answers (CONNACK, SUBACK, PUBACK, the close
  after a DISCONNECT) with ``asyncio.wait_for``, which on Python 3.11 returns an answer that came in the
  loop pass of a cancellation and drops the cancellation; after each such wait the transport re-raises a
  cancellation of the calling task that arrived during the wait (:func:`_keep_cancellation`), so a
  TaskGroup that cancels a party on an error, or an :func:`asyncio.timeout`, never waits for it forever.
  The reader task is stopped by :func:`mpdp.broker.transport.base.running`, which cancels it again if it
  outlives a cancellation.
* ``persistent=True``: clean_session False (MQTT 3.1.1) / clean_start False with a session expiry
  (MQTT 5), so QoS 1 messages that arrive while disconnected are delivered on reconnect (a broker that
  restarts keeps them only with ``persistence true``: :func:`mpdp.broker.mosquitto.run_mosquitto`).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import math
import random
import ssl
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any

import aiomqtt
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties
from paho.mqtt.reasoncodes import ReasonCode

from mpdp.broker.transport.backoff import FIRST_DELAY, Backoff
from mpdp.broker.transport.base import Delivery, as_bytes, running
from mpdp.broker.transport.coalesce import coalesce_writes
from mpdp.broker.transport.connecting import (
    CLIENT_LOG,
    DEAD_ON_ARRIVAL,
    ClosedBeforeConnack,
    discard,
    enter,
    retrieve,
)
from mpdp.broker.transport.filters import check_filter, check_topic
from mpdp.broker.transport.outage import OUTAGES
from mpdp.broker.transport.writer import register_writes_when_open
from mpdp.protocols.errors import TransportError

if TYPE_CHECKING:
    from mpdp.broker.endpoint import BrokerEndpoint

__all__ = ["SESSION_EXPIRY", "MqttTransport", "aiomqtt_client", "open_transport", "tls_context"]

log = logging.getLogger("mpdp.transport")

#: Seconds a persistent MQTT v5 session outlives its connection at least (longer with a longer reconnect
#: window; v3.1.1 sessions never expire).
SESSION_EXPIRY = 3600
_PENDING_PUBLISHES = 100_000
#: A connection lost this many seconds or less after it was made counts towards :data:`TAKEOVER_LIMIT`.
TAKEOVER_SECONDS = 10.0
#: Connections in a row closed right after the CONNACK or within :data:`TAKEOVER_SECONDS`: taken over.
TAKEOVER_LIMIT = 5
_FAILED = None  # the queue item that wakes consumers once the transport gave up
_Io = Callable[[aiomqtt.Client], Awaitable[None]]  # one network action on a connected client


def aiomqtt_client(endpoint: BrokerEndpoint, client_id: str, *, persistent: bool = False,
                   manual_ack: bool = True) -> aiomqtt.Client:
    """A new (unconnected) aiomqtt client for ``endpoint`` (its transport, TLS, login and MQTT version).

    Args:
        client_id: the MQTT client id, unique per broker.
        persistent: keep the session on the broker across reconnects (module docstring).
        manual_ack: send a QoS 1 PUBACK only when the caller acknowledges (paho ``ack``); False:
            paho acknowledges on receipt.

    Raises:
        TransportError: a TLS file that cannot be loaded (names the file).
    """
    options: dict[str, Any] = {
        "identifier": client_id, "timeout": endpoint.timeout, "username": endpoint.username,
        "password": endpoint.password, "transport": "websockets" if endpoint.scheme in ("ws", "wss") else "tcp",
        "websocket_path": endpoint.websocket_path, "tls_context": tls_context(endpoint) if endpoint.tls else None,
        "logger": CLIENT_LOG,
    }
    if endpoint.protocol == "5":
        properties = Properties(PacketTypes.CONNECT)
        properties.ReceiveMaximum = endpoint.queue_size
        if persistent:
            properties.SessionExpiryInterval = max(SESSION_EXPIRY, math.ceil(endpoint.reconnect_window))
        client = aiomqtt.Client(endpoint.host, endpoint.port, protocol=aiomqtt.ProtocolVersion.V5,
                                clean_start=not persistent, properties=properties, **options)
    else:
        client = aiomqtt.Client(endpoint.host, endpoint.port, protocol=aiomqtt.ProtocolVersion.V311,
                                clean_session=not persistent, **options)
    client._client.manual_ack_set(manual_ack)  # paho's public API under aiomqtt (pinned <3)
    coalesce_writes(client._client)  # one send for the PUBACKs and publishes queued at once
    register_writes_when_open(client)  # no writer on a socket closed before aiomqtt's late add_writer
    # aiomqtt warns once more than 10 publishes await their PUBACK; a worker's shared connection
    # (mpdp.parties.session.multiplex) carries dozens of its parties' publishes at once.
    client.pending_calls_threshold = _PENDING_PUBLISHES
    return client


def tls_context(endpoint: BrokerEndpoint) -> ssl.SSLContext:
    """The TLS context of ``endpoint``: verifies the broker's certificate and host name against
    ``endpoint.cafile`` (else the system's CAs) and presents ``endpoint.certfile``/``keyfile`` if given.

    Raises:
        TransportError: a CA, certificate or key file that cannot be read or parsed (names the file).
    """
    return _tls_context(endpoint.cafile, endpoint.certfile, endpoint.keyfile)


@functools.lru_cache(maxsize=16)
def _tls_context(cafile: str | None, certfile: str | None, keyfile: str | None) -> ssl.SSLContext:
    current = cafile
    try:
        context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=cafile)
        if certfile is not None:
            current = certfile
            context.load_cert_chain(certfile, keyfile)
    except (OSError, ssl.SSLError) as exc:
        raise TransportError(f"cannot load the TLS file {current}: {exc}") from None
    return context


#: CONNACK codes of a refused login: MQTT 3.1.1 §3.2.2.3 (4 bad user name or password, 5 not authorized)
#: and MQTT 5 §3.2.2.2 (0x86 bad user name or password, 0x87 not authorized, 0x85 client id not valid).
_REFUSED = frozenset({4, 5, 0x85, 0x86, 0x87})


def _refused_for_good(exc: Exception) -> bool:
    """True for a CONNACK refusing the login or client id, for a TLS certificate that fails verification
    (aiomqtt raises it as the cause of an MqttError), and for a TLS alert about the client's certificate."""
    if isinstance(exc, ClosedBeforeConnack):
        return exc.final
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, ssl.SSLCertVerificationError):
            return True
        cause = cause.__cause__ or cause.__context__
    code = getattr(exc, "rc", None)
    value = code.value if isinstance(code, ReasonCode) else code
    return isinstance(value, int) and value in _REFUSED


def _cancel_requests() -> int:
    """The current task's cancellation requests not withdrawn (:meth:`asyncio.Task.cancelling`; 0 outside a task)."""
    task = asyncio.current_task()
    return 0 if task is None else task.cancelling()


def _keep_cancellation(before: int) -> None:
    """Raise CancelledError if the current task was asked to cancel during a wait (its requests grew above
    ``before``, counted just before the wait) and an inner ``asyncio.wait_for`` swallowed the request.

    Python 3.11's ``wait_for`` (Lib/asyncio/tasks.py), woken by a cancellation, returns the awaited future's
    result (or raises its error) when that future is done by then: ``except CancelledError: if fut.done():
    return fut.result()``. A cancellation that reaches the task in the loop pass in which the broker's answer
    sets the future (a timeout or a TaskGroup's cancel as the DISCONNECT or SUBACK comes back; most likely on
    a loaded machine, where a pass holds many callbacks) is lost, yet stays counted in
    :meth:`asyncio.Task.cancelling`. Python 3.12's ``wait_for`` (built on :func:`asyncio.timeout`) raises it.

    Counted against ``before``, not zero: Python 3.11's TaskGroup never withdraws the cancellation it asks of
    its parent task when a child fails while the parent waits at the end of the ``async with`` (its
    ``__aexit__`` withdraws only a request made before it started waiting), so that request stays counted for
    the rest of the task. Read as pending, it cancelled every later connection of the task, e.g. a worker's
    report of its failure: the worker exited with an empty CancelledError instead of the cause."""
    if _cancel_requests() > before:
        raise asyncio.CancelledError


async def _close(client: aiomqtt.Client, timeout: float) -> None:
    """Disconnect ``client`` if it is connected; errors of a connection already gone are moot (and its
    unexpected disconnection is marked retrieved: :func:`mpdp.broker.transport.connecting.retrieve`).

    Raises:
        asyncio.CancelledError: the calling task was cancelled meanwhile, also when the cancellation came in
            the loop pass of the broker's answer (aiomqtt's ``wait_for`` drops it then: :func:`_keep_cancellation`;
            a task that went on reconnecting after a takeover test's timeout hung a pytest worker).
    """
    before = _cancel_requests()
    try:
        with contextlib.suppress(aiomqtt.MqttError, OSError, TimeoutError):
            async with asyncio.timeout(timeout):
                await client.__aexit__(None, None, None)
    finally:
        client._disconnected.add_done_callback(retrieve)  # aiomqtt's internals (pinned <3)
    _keep_cancellation(before)


async def _drop(client: aiomqtt.Client, connected: bool, timeout: float) -> None:
    """Disconnect ``client`` if its connect succeeded; else discard it (no disconnect to wait for)."""
    if connected:
        await _close(client, timeout)
    else:
        discard(client)


class MqttTransport:
    """One MQTT client (a :class:`mpdp.broker.transport.base.Transport`); made by :func:`open_transport`.

    Args:
        rng: the random source of the reconnect backoff's jitter (None: a new :class:`random.Random`
            seeded by the operating system).

    Attributes:
        client_id: the MQTT client id.
        persistent: whether the broker keeps the session across reconnects.
        reconnects: connections made after the first.
    """

    def __init__(self, endpoint: BrokerEndpoint, client_id: str, *, persistent: bool = False,
                 rng: random.Random | None = None) -> None:
        self.client_id = client_id
        self.persistent = persistent
        self.reconnects = 0
        self._endpoint = endpoint
        self._rng = random.Random() if rng is None else rng
        self._filters: dict[str, None] = {}  # an ordered set, renewed on every connection
        self._queue: asyncio.Queue[Delivery | None] = asyncio.Queue(maxsize=endpoint.queue_size)
        self._client: aiomqtt.Client | None = None
        self._state = asyncio.Condition()  # notified when _client or _failure changes
        self._failure: str | None = None
        self._lost_at: float | None = None  # monotonic time the current outage began, None while connected
        self._downtime = 0.0  # seconds of the outages that ended
        self._connected_at = 0.0  # monotonic time the current connection was made
        self._quick_losses = 0  # connections in a row lost right after they were made (TAKEOVER_LIMIT)

    def _name(self) -> str:
        return f"MQTT client {self.client_id!r} at {self._endpoint.url}"

    @property
    def connected(self) -> bool:
        """True while the client holds a connection (False while it reconnects, and once it gave up or closed)."""
        return self._client is not None and self._failure is None

    @property
    def downtime(self) -> float:
        """Seconds this client has been without its connection since it first connected (ended outages
        and the current one): a clock that pauses while the broker is away subtracts it."""
        current = 0.0 if self._lost_at is None else time.monotonic() - self._lost_at
        return self._downtime + current

    async def connect(self) -> None:
        """Connect (retrying for up to ``endpoint.reconnect_window`` seconds) and start the reader task.

        Raises:
            TransportError: no connection within the window, or the login or certificate was refused.
        """
        client, _ = await self._open(Backoff(self._endpoint.reconnect_window, self._rng))
        await self._set_client(client)

    async def _set_client(self, client: aiomqtt.Client | None) -> None:
        async with self._state:
            self._client = client
            self._state.notify_all()

    async def _fail(self, reason: str) -> None:
        async with self._state:
            self._failure, self._client = reason, None
            self._state.notify_all()
        await self._queue.put(_FAILED)

    async def _open(self, backoff: Backoff) -> tuple[aiomqtt.Client, int]:
        """A connected client with every remembered filter subscribed, and the attempts it took, trying
        until ``backoff``'s window is over."""
        endpoint, last = self._endpoint, "no attempt"
        while True:
            backoff.attempted()
            client = aiomqtt_client(endpoint, self.client_id, persistent=self.persistent)
            connected = False
            before = _cancel_requests()
            try:
                async with asyncio.timeout(endpoint.timeout):
                    await enter(client)
                    connected = True
                    _keep_cancellation(before)
                    if self._filters:
                        await self._subscribe_on(client, list(self._filters))
                        _keep_cancellation(before)
                self._connected_at = time.monotonic()
                return client, backoff.attempts
            except TimeoutError:  # before OSError, its base class
                last = f"no answer within {endpoint.timeout:g} s"
            except (aiomqtt.MqttError, OSError) as exc:
                last = str(exc) or type(exc).__name__
                if last == DEAD_ON_ARRIVAL and self._taken_over():
                    await _drop(client, connected, endpoint.timeout)
                    raise TransportError(self._takeover_text(), reason=last, final=True) from None
                if _refused_for_good(exc):  # a wrong login or certificate does not get better by retrying
                    await _drop(client, connected, endpoint.timeout)
                    raise TransportError(f"the MQTT broker at {endpoint.url} refused client {self.client_id!r}: "
                                         f"{last}", reason=last, final=True) from None
            except asyncio.CancelledError:  # Ctrl-C, SIGTERM: close the half-made client's socket, quietly (an
                discard(client)  # aiomqtt future of its later disconnection would be logged, never retrieved)
                raise
            await _drop(client, connected, endpoint.timeout)
            delay = backoff.delay()
            if delay is None:
                break
            await asyncio.sleep(delay)
        attempts = backoff.attempts
        within = f" within {backoff.window:g} s" if backoff.window > 0 else ""
        raise TransportError(f"cannot reach the MQTT broker at {endpoint.url} as client {self.client_id!r}"
                             f"{within} ({attempts} attempt{'s' * (attempts > 1)}): {last}", reason=last)

    def _taken_over(self) -> bool:
        """Count one more connection lost right after it was made; True once :data:`TAKEOVER_LIMIT` in a row."""
        self._quick_losses += 1
        return self._quick_losses >= TAKEOVER_LIMIT

    def _takeover_text(self) -> str:
        login = "" if self._endpoint.username is None else (
            f" (the listener may make the login {self._endpoint.username!r} the client id, as the observer's listener "
            "of `mpdp broker config` does: is this the port for this login?)")
        return (f"the MQTT broker at {self._endpoint.url} closed the connection of client {self.client_id!r} "
                f"{TAKEOVER_LIMIT} times in a row within {TAKEOVER_SECONDS:g} s of accepting it: another connection "
                f"has the same client id{login}")

    async def _subscribe_on(self, client: aiomqtt.Client, filters: list[str]) -> None:
        granted = await client.subscribe([(f, 1) for f in filters], timeout=self._endpoint.timeout)
        refused = [f for f, code in zip(filters, granted, strict=False)
                   if isinstance(code, ReasonCode) and code.is_failure]
        if refused:
            raise TransportError(f"{self._name()}: the broker refused the subscription to {refused}")

    async def run(self) -> None:
        """The reader task: move messages into the queue, acknowledge them, reconnect when the
        connection is lost; on giving up (or on any unexpected error), wake the consumers with it."""
        try:
            await self._serve()
        except Exception as exc:  # noqa: BLE001 - reported to every consumer, not lost in a task
            await self._fail(f"{self._name()}: {type(exc).__name__}: {exc}")

    async def _serve(self) -> None:
        url = self._endpoint.url
        while True:
            client = self._client
            assert client is not None
            reason = "the broker closed the connection"
            try:
                await self._read(client)
            except aiomqtt.MqttError as exc:
                reason = str(exc) or type(exc).__name__
            if time.monotonic() - self._connected_at > TAKEOVER_SECONDS:
                self._quick_losses = 0
            elif self._taken_over():
                await self._set_client(None)
                await _close(client, self._endpoint.timeout)
                await self._fail(self._takeover_text())
                return
            backoff = Backoff(self._endpoint.reconnect_window, self._rng)
            self._lost_at = backoff.started
            OUTAGES.lost(url, self.client_id, reason, backoff.window)
            await self._set_client(None)
            await _close(client, self._endpoint.timeout)
            try:
                client, attempts = await self._open(backoff)
            except TransportError as exc:
                OUTAGES.abandoned(url, self.client_id)
                await self._fail(f"{exc} after the connection was lost")
                return
            self._downtime += time.monotonic() - backoff.started
            self._lost_at = None
            self.reconnects += 1
            await self._set_client(client)
            OUTAGES.restored(url, self.client_id, attempts)

    async def _read(self, client: aiomqtt.Client) -> None:
        async for message in client.messages:
            payload = message.payload
            data = bytes(payload) if isinstance(payload, bytes | bytearray) else as_bytes(str(payload or ""))
            await self._queue.put(Delivery(message.topic.value, data))
            if message.qos > 0:
                client._client.ack(message.mid, message.qos)  # paho manual acknowledgement

    async def _connected(self) -> aiomqtt.Client:
        client = self._client
        if client is not None and self._failure is None:  # connected: no lock per publish
            return client
        async with self._state:
            await self._state.wait_for(lambda: self._client is not None or self._failure is not None)
            if self._failure is not None:
                raise TransportError(self._failure)
            assert self._client is not None
            return self._client

    async def _with_connection(self, what: str, action: str, attempt_io: _Io) -> None:
        """Run ``attempt_io(client)`` on the current connection; after a lost connection, again on the next
        one; all within the reconnect window plus one timeout (the reader gives up on reconnecting
        within the window, which ends the wait for a connection sooner)."""
        endpoint = self._endpoint
        window = endpoint.reconnect_window + endpoint.timeout
        last = ""
        try:
            async with asyncio.timeout(window):
                while True:
                    client = await self._connected()
                    before = _cancel_requests()
                    try:
                        await attempt_io(client)
                        _keep_cancellation(before)
                        return
                    except aiomqtt.MqttError as exc:
                        last = f": {exc}"
                        log.debug("%s: %s %s failed (%s); retrying", self._name(), action, what, exc)
                        await asyncio.sleep(FIRST_DELAY)
        except TimeoutError:
            raise TransportError(f"{self._name()}: {action} {what} not acknowledged within {window:g} s{last}"
                                 ) from None

    async def subscribe(self, *filters: str) -> None:
        """Subscribe to ``filters`` with QoS 1; they are renewed after every reconnect.

        Raises:
            ParameterError: a malformed filter.
            TransportError: the broker refused, did not acknowledge in time, or is gone for good.
        """
        for topic_filter in filters:
            check_filter(topic_filter)
        self._filters.update(dict.fromkeys(filters))

        async def io(client: aiomqtt.Client) -> None:
            await self._subscribe_on(client, list(filters))

        await self._with_connection(f"to {list(filters)}", "subscribe", io)

    async def publish(self, topic: str, payload: bytes | str) -> None:
        """Publish with QoS 1 and wait for the PUBACK (again after a reconnect: at least once).

        Raises:
            ParameterError: a malformed topic.
            TransportError: not acknowledged in time, or the broker is gone for good.
        """
        data = as_bytes(payload)
        check_topic(topic)

        async def io(client: aiomqtt.Client) -> None:
            await client.publish(topic, data, qos=1, timeout=self._endpoint.timeout)

        await self._with_connection(f"on {topic!r}", "publish", io)

    async def deliveries(self) -> AsyncIterator[Delivery]:
        """The incoming messages in arrival order (what was received before a failure comes first).

        Raises:
            TransportError: reconnecting failed for good.
        """
        while True:
            item = await self._queue.get()
            if item is _FAILED:
                self._queue.put_nowait(_FAILED)  # for any other consumer
                raise TransportError(self._failure or self._name())
            yield item

    async def close(self) -> None:
        """Disconnect (the reader task must be stopped first)."""
        OUTAGES.abandoned(self._endpoint.url, self.client_id)
        client, self._client = self._client, None
        self._failure = self._failure or f"{self._name()}: closed"
        if client is not None:
            await _close(client, self._endpoint.timeout)


@contextlib.asynccontextmanager
async def open_transport(endpoint: BrokerEndpoint, client_id: str, *, persistent: bool = False,
                         rng: random.Random | None = None) -> AsyncIterator[MqttTransport]:
    """Connect an :class:`MqttTransport` (``rng``: its backoff's random source, None: its own); stop its
    reader and disconnect on exit.

    Raises:
        TransportError: the broker cannot be reached within ``endpoint.reconnect_window`` seconds (one
            line naming the URL and the client id).
    """
    transport = MqttTransport(endpoint, client_id, persistent=persistent, rng=rng)
    await transport.connect()
    try:
        async with running(transport.run(), f"mqtt-reader-{client_id}"):
            yield transport
    finally:
        await transport.close()
