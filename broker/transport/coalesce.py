"""One ``send`` for many MQTT packets: paho-mqtt writes each queued packet with its own ``send`` system call;
a process that acknowledges (PUBACK) or publishes hundreds of QoS 1 messages per event-loop turn (the
observer, a worker's parties) spent about 17% of its time in those calls (py-spy, issue 23 item 2).

:func:`coalesce_writes` makes one paho client join the packets queued at each write (up to
:data:`MAX_BATCH_BYTES`) into one buffer and send it at once. The bytes on the wire are the same, in the
same order. Only packets whose write paho acts on stay single (a QoS 0 PUBLISH, which paho marks published
once written, and DISCONNECT, after which it closes the socket): paho's own write handles them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import paho.mqtt.client as paho
from paho.mqtt.enums import MQTTErrorCode

__all__ = ["MAX_BATCH_BYTES", "coalesce_writes"]

#: Bytes joined into one ``send`` at most (the socket takes what its buffer holds; the rest waits).
MAX_BATCH_BYTES = 1 << 16


def _plain(packet: Mapping[str, Any]) -> bool:
    """True for a packet whose write paho does not act on (module docstring)."""
    command = packet["command"] & 0xF0
    return command != paho.DISCONNECT and not (command == paho.PUBLISH and packet["qos"] == 0)


def coalesce_writes(client: paho.Client) -> None:
    """Make ``client`` send the packets it has queued in one ``send`` (module docstring); paho-mqtt 2.x's
    private write path (``_packet_write``, ``_out_packet``, ``_sock_send``), as pinned by this project."""
    single: Callable[[], MQTTErrorCode] = client._packet_write
    queue = client._out_packet

    def packet_write() -> MQTTErrorCode:
        while len(queue) > 1 and _plain(queue[0]) and _plain(queue[1]):
            batch, size = [], 0
            while queue and _plain(queue[0]) and size < MAX_BATCH_BYTES:
                packet = queue.popleft()
                batch.append(packet)
                size += packet["to_process"]
            data = b"".join(memoryview(p["packet"])[p["pos"]:] for p in batch)
            try:
                written = client._sock_send(data)
            except (AttributeError, ValueError):  # no socket (closed meanwhile): as paho
                queue.extendleft(reversed(batch))
                return MQTTErrorCode.MQTT_ERR_SUCCESS
            except BlockingIOError:
                queue.extendleft(reversed(batch))
                return MQTTErrorCode.MQTT_ERR_AGAIN
            except OSError as err:
                queue.extendleft(reversed(batch))
                client._easy_log(paho.MQTT_LOG_ERR, "failed to send on socket: %s", err)
                return MQTTErrorCode.MQTT_ERR_CONN_LOST
            rest = []
            for packet in batch:
                taken = min(written, packet["to_process"])
                packet["pos"] += taken
                packet["to_process"] -= taken
                written -= taken
                if packet["to_process"]:
                    rest.append(packet)
            queue.extendleft(reversed(rest))
            with client._msgtime_mutex:
                client._last_msg_out = paho.time_func()
            if rest:  # the socket's buffer is full: wait until it is writable again
                return MQTTErrorCode.MQTT_ERR_AGAIN
        return single()

    client._packet_write = packet_write  # type: ignore[method-assign]
