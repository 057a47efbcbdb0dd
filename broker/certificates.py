"""A private certificate authority for one deployment's broker: the CA, the broker's server certificate and
one client certificate per identity, made with ``cryptography`` (ECDSA P-256, SHA-256, PEM).

The broker presents the server certificate (its subject alternative names: 127.0.0.1, ::1, localhost and
every name clients use to reach it); clients verify it against the CA (host name checked) and present
their own certificate, which the broker verifies (``require_certificate``).
"""

from __future__ import annotations

import datetime
import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from mpdp.protocols.errors import ParameterError

__all__ = ["Issued", "CertificateAuthority", "LOOPBACK_NAMES"]

#: Names every server certificate carries, so that a broker on this machine verifies.
LOOPBACK_NAMES = ("127.0.0.1", "::1", "localhost")
_CLOCK_SKEW = datetime.timedelta(hours=1)


@dataclass(frozen=True, slots=True)
class Issued:
    """A certificate and its private key, both PEM (the key unencrypted PKCS#8: write it with mode 0600)."""

    certificate: bytes
    key: bytes


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "mpdp"),
                      x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def _alternative_name(host: str) -> x509.GeneralName:
    try:
        return x509.IPAddress(ipaddress.ip_address(host))
    except ValueError:
        return x509.DNSName(host)


class CertificateAuthority:
    """A fresh self-signed CA that issues server and client certificates valid for ``days`` days.

    Args:
        name: the CA's common name (e.g. ``mpdp CA deploy-1``).
        days: validity of every certificate, from one hour ago (clock skew) on.

    Raises:
        ParameterError: ``days`` outside 1..3650.
    """

    def __init__(self, name: str, days: int = 365) -> None:
        if not isinstance(days, int) or not 1 <= days <= 3650:
            raise ParameterError("--days", days, "an integer number of days in 1..3650")
        self._now = datetime.datetime.now(datetime.UTC)
        self._days = days
        self._key = ec.generate_private_key(ec.SECP256R1())
        self._subject = _name(name)
        builder = self._builder(self._subject, self._key.public_key()).add_extension(
            x509.BasicConstraints(ca=True, path_length=0), critical=True,
        ).add_extension(
            x509.KeyUsage(digital_signature=False, content_commitment=False, key_encipherment=False,
                          data_encipherment=False, key_agreement=False, key_cert_sign=True, crl_sign=True,
                          encipher_only=False, decipher_only=False), critical=True,
        )
        self.certificate = builder.sign(self._key, hashes.SHA256())

    @property
    def certificate_pem(self) -> bytes:
        """The CA certificate (PEM): what every client and the broker trust."""
        return self.certificate.public_bytes(serialization.Encoding.PEM)

    def _builder(self, subject: x509.Name, public_key: ec.EllipticCurvePublicKey) -> x509.CertificateBuilder:
        return (x509.CertificateBuilder().subject_name(subject).issuer_name(self._subject)
                .public_key(public_key).serial_number(x509.random_serial_number())
                .not_valid_before(self._now - _CLOCK_SKEW)
                .not_valid_after(self._now + datetime.timedelta(days=self._days))
                .add_extension(x509.SubjectKeyIdentifier.from_public_key(public_key), critical=False))

    def _issue(self, common_name: str, usage: x509.ObjectIdentifier,
               names: Iterable[str] = ()) -> Issued:
        key = ec.generate_private_key(ec.SECP256R1())
        builder = self._builder(_name(common_name), key.public_key()).add_extension(
            x509.BasicConstraints(ca=False, path_length=None), critical=True,
        ).add_extension(x509.ExtendedKeyUsage([usage]), critical=False).add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(self._key.public_key()), critical=False,
        )
        alternative = list(dict.fromkeys(names))
        if alternative:
            builder = builder.add_extension(
                x509.SubjectAlternativeName([_alternative_name(h) for h in alternative]), critical=False)
        certificate = builder.sign(self._key, hashes.SHA256())
        return Issued(certificate.public_bytes(serialization.Encoding.PEM), _key_pem(key))

    def server(self, hosts: Iterable[str] = ()) -> Issued:
        """The broker's certificate: subject alternative names :data:`LOOPBACK_NAMES` and ``hosts``
        (IP addresses as IP entries, the rest as DNS names)."""
        hosts = list(hosts)
        return self._issue(hosts[0] if hosts else "localhost", ExtendedKeyUsageOID.SERVER_AUTH,
                           [*LOOPBACK_NAMES, *hosts])

    def client(self, identity: str) -> Issued:
        """A client certificate for ``identity`` (its common name: the broker user name)."""
        return self._issue(identity, ExtendedKeyUsageOID.CLIENT_AUTH)
