"""Broker passwords: fresh random secrets and the ``mosquitto_passwd`` file format.

mosquitto 2.x stores ``user:$7$ITERATIONS$SALT$HASH`` per line: PBKDF2-HMAC-SHA512 (RFC 8018) of the
password with a 12-byte random salt, ``ITERATIONS`` rounds (mosquitto_passwd's default 101), a 64-byte
hash, salt and hash in standard base64 (mosquitto's ``pw_sha512_pbkdf2``).
"""

from __future__ import annotations

import base64
import hashlib
import secrets

from mpdp.protocols.errors import ParameterError

__all__ = ["PBKDF2_ITERATIONS", "new_password", "password_line", "verify_password_line"]

#: mosquitto_passwd's default PBKDF2 rounds.
PBKDF2_ITERATIONS = 101
_SALT_BYTES, _HASH_BYTES = 12, 64


def new_password() -> str:
    """A fresh password: 32 URL-safe characters from the OS CSPRNG (192 bits)."""
    return secrets.token_urlsafe(24)


def _hash(password: str, salt: bytes, iterations: int) -> bytes:
    return hashlib.pbkdf2_hmac("sha512", password.encode(), salt, iterations, _HASH_BYTES)


def password_line(username: str, password: str, *, iterations: int = PBKDF2_ITERATIONS,
                  salt: bytes | None = None) -> str:
    """One line of a mosquitto password file (no newline) for ``username`` and ``password``.

    Args:
        salt: 12 bytes (None: fresh from the OS CSPRNG).

    Raises:
        ParameterError: a user name that is empty or holds ``:`` or a line break, or a salt not 12 bytes.
    """
    if not username or any(c in username for c in ":\r\n"):
        raise ParameterError("username", username, "a non-empty name without ':' or line breaks")
    salt = secrets.token_bytes(_SALT_BYTES) if salt is None else salt
    if len(salt) != _SALT_BYTES:
        raise ParameterError("salt", salt, f"{_SALT_BYTES} bytes")
    digest = _hash(password, salt, iterations)
    return f"{username}:$7${iterations}${base64.b64encode(salt).decode()}${base64.b64encode(digest).decode()}"


def verify_password_line(line: str, username: str, password: str) -> bool:
    """True iff ``line`` (mosquitto ``$7$`` format) holds ``username`` with ``password``."""
    user, _, stored = line.strip().partition(":")
    fields = stored.split("$")
    if user != username or len(fields) != 5 or fields[1] != "7":
        return False
    iterations, salt, digest = int(fields[2]), base64.b64decode(fields[3]), base64.b64decode(fields[4])
    return secrets.compare_digest(_hash(password, salt, iterations), digest)
