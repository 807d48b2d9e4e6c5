"""A private certificate authority made at test time, for the TLS listeners of the test clusters.

Everything is generated fresh (nothing checked in, nothing that expires in the repository):
a CA, a server certificate for 127.0.0.1 / localhost, a client certificate whose key is
encrypted with a password, a server certificate that has already expired, and a second,
unrelated CA (the "wrong CA" a misconfigured client would trust). The server certificate is
also good for client authentication: a broker is a client of its own inter-broker listener.
"""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

_DAY = datetime.timedelta(days=1)


@dataclass(frozen=True)
class Identity:
    """A certificate and its key as files (PEM)."""

    cert: Path
    key: Path
    key_password: str | None = None

    @property
    def cert_pem(self) -> str:
        return self.cert.read_text()

    @property
    def key_pem(self) -> str:
        return self.key.read_text()

    def keystore_pem(self, path: Path) -> Path:
        """The key and the certificate in one PEM file: a Java PEM keystore (``ssl.keystore.type=PEM``)."""
        path.write_text(self.key_pem + self.cert_pem)
        path.chmod(0o600)
        return path


@dataclass(frozen=True)
class Pki:
    """The files of one test PKI; ``ca`` is what clients trust, ``wrong_ca`` a CA nobody uses."""

    directory: Path
    ca: Path
    wrong_ca: Path
    server: Identity
    expired_server: Identity
    client: Identity
    client_key_password: str

    @property
    def ca_pem(self) -> str:
        return self.ca.read_text()


def _name(common_name: str) -> x509.Name:
    return x509.Name(
        [
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "kafka-migration tests"),
            x509.NameAttribute(NameOID.COMMON_NAME, common_name),
        ]
    )


def _key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _ca(common_name: str, now: datetime.datetime) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    key = _key()
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name(common_name))
        .issuer_name(_name(common_name))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - _DAY)
        .not_valid_after(now + 30 * _DAY)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    return cert, key


def _leaf(
    common_name: str,
    ca_cert: x509.Certificate,
    ca_key: ec.EllipticCurvePrivateKey,
    *,
    server: bool,
    not_before: datetime.datetime,
    not_after: datetime.datetime,
) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    key = _key()
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(common_name))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(not_before)
        .not_valid_after(not_after)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.ExtendedKeyUsage(
                [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]
                if server
                else [ExtendedKeyUsageOID.CLIENT_AUTH]
            ),
            critical=False,
        )
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
            critical=False,
        )
    )
    if server:
        builder = builder.add_extension(
            x509.SubjectAlternativeName([x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
    return builder.sign(ca_key, hashes.SHA256()), key


def _write_cert(path: Path, cert: x509.Certificate) -> Path:
    path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return path


def _write_key(path: Path, key: ec.EllipticCurvePrivateKey, password: str | None = None) -> Path:
    encryption: serialization.KeySerializationEncryption = (
        serialization.BestAvailableEncryption(password.encode()) if password else serialization.NoEncryption()
    )
    path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, encryption))
    path.chmod(0o600)
    return path


def make_pki(directory: Path, client_key_password: str = "client-key-pass") -> Pki:
    """Write a fresh PKI into ``directory`` (created if needed) and describe its files."""
    directory.mkdir(parents=True, exist_ok=True)
    now = datetime.datetime.now(datetime.UTC)
    ca_cert, ca_key = _ca("kafka-migration test CA", now)
    wrong_cert, _ = _ca("some other CA", now)
    server_cert, server_key = _leaf(
        "localhost", ca_cert, ca_key, server=True, not_before=now - _DAY, not_after=now + 30 * _DAY
    )
    expired_cert, expired_key = _leaf(
        "localhost", ca_cert, ca_key, server=True, not_before=now - 30 * _DAY, not_after=now - 2 * _DAY
    )
    client_cert, client_key = _leaf(
        "kafka-migration client", ca_cert, ca_key, server=False, not_before=now - _DAY, not_after=now + 30 * _DAY
    )
    return Pki(
        directory=directory,
        ca=_write_cert(directory / "ca.pem", ca_cert),
        wrong_ca=_write_cert(directory / "wrong-ca.pem", wrong_cert),
        server=Identity(
            _write_cert(directory / "server.pem", server_cert), _write_key(directory / "server.key", server_key)
        ),
        expired_server=Identity(
            _write_cert(directory / "expired-server.pem", expired_cert),
            _write_key(directory / "expired-server.key", expired_key),
        ),
        client=Identity(
            _write_cert(directory / "client.pem", client_cert),
            _write_key(directory / "client.key", client_key, client_key_password),
            client_key_password,
        ),
        client_key_password=client_key_password,
    )
