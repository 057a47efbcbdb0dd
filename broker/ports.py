"""Free loopback ports for the brokers a run starts itself."""

from __future__ import annotations

import socket

__all__ = ["LOOPBACK", "free_loopback_port"]

#: The IPv4 loopback address that the embedded brokers and ``free_loopback_port`` bind.
LOOPBACK = "127.0.0.1"


def free_loopback_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago (the OS picks it).

    Another process may take it before our broker binds; callers retry on a bind failure."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((LOOPBACK, 0))
        return int(sock.getsockname()[1])
