"""The kinds of test cluster, by what a client must present: PLAINTEXT, TLS (mutual or not), SASL_SSL/SCRAM, ACLs.

A kind gives the broker's listener properties, the ``kafka-storage format`` arguments it needs
(SCRAM users exist only if written at format time in KRaft), and librdkafka settings for a
client. Certificates come from harness.kafka.certs (a PKI made at test time). The controller listener
is always PLAINTEXT on loopback and never advertised: only the broker itself talks to it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.kafka.certs import Pki

SCRAM = "SCRAM-SHA-512"
STANDARD_AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"


@dataclass(frozen=True)
class ScramUser:
    name: str
    password: str

    def format_argument(self) -> str:
        """``kafka-storage format --add-scram`` takes name and password unquoted, split at commas."""
        for value in (self.name, self.password):
            if any(c in value for c in ",[]\"'"):
                raise ValueError(f"SCRAM user {self.name!r}: names and passwords may not hold , [ ] or quotes")
        return f"{SCRAM}=[name={self.name},password={self.password}]"


ADMIN = ScramUser("admin", "admin-secret")


@dataclass(frozen=True)
class Plaintext:
    """No TLS, no authentication: what most tests use."""

    protocol = "PLAINTEXT"

    def broker_properties(self, directory: Path) -> dict[str, str]:
        return {}

    def format_arguments(self) -> list[str]:
        return []

    def client_settings(self, bootstrap: str, user: ScramUser | None = None) -> dict[str, Any]:
        return {"bootstrap.servers": bootstrap}


def _tls_properties(pki: Pki, directory: Path) -> dict[str, str]:
    """A PEM keystore (key and certificate in one file) and the test CA as a PEM truststore.

    The broker's own inter-broker client uses the same keystore and truststore (and verifies
    127.0.0.1 against the certificate's names, as any client does).
    """
    return {
        "ssl.keystore.type": "PEM",
        "ssl.keystore.location": str(pki.server.keystore_pem(directory / "server-keystore.pem")),
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": str(pki.ca),
    }


def _ca_settings(pki: Pki) -> dict[str, Any]:
    return {"ssl.ca.location": str(pki.ca)}


@dataclass(frozen=True)
class Tls:
    """An SSL listener; with ``client_auth`` (mutual TLS) it requires a client certificate signed by the test CA."""

    pki: Pki
    client_auth: bool = True
    protocol = "SSL"

    def broker_properties(self, directory: Path) -> dict[str, str]:
        return {**_tls_properties(self.pki, directory), "ssl.client.auth": "required" if self.client_auth else "none"}

    def format_arguments(self) -> list[str]:
        return []

    def client_settings(self, bootstrap: str, user: ScramUser | None = None) -> dict[str, Any]:
        settings = {"bootstrap.servers": bootstrap, "security.protocol": "SSL", **_ca_settings(self.pki)}
        if self.client_auth:
            settings["ssl.certificate.location"] = str(self.pki.client.cert)
            settings["ssl.key.location"] = str(self.pki.client.key)
            settings["ssl.key.password"] = self.pki.client_key_password
        return settings


@dataclass(frozen=True)
class SaslSsl:
    """A SASL_SSL listener with SCRAM-SHA-512; the users are created when the storage is formatted.

    ``admin`` is also the broker's own login on its inter-broker listener. With ``acls``, the
    StandardAuthorizer enforces ACLs: ``admin`` is the super user (and so is ANONYMOUS, which
    only the broker itself can be, on its loopback controller listener); every other user may do
    only what an ACL allows.
    """

    pki: Pki
    users: tuple[ScramUser, ...] = ()
    acls: bool = False
    admin: ScramUser = field(default=ADMIN)
    protocol = "SASL_SSL"

    @property
    def all_users(self) -> tuple[ScramUser, ...]:
        return (self.admin, *(u for u in self.users if u.name != self.admin.name))

    def user(self, name: str) -> ScramUser:
        for candidate in self.all_users:
            if candidate.name == name:
                return candidate
        raise KeyError(f"no SCRAM user {name!r} on this cluster")

    def broker_properties(self, directory: Path) -> dict[str, str]:
        properties = {
            **_tls_properties(self.pki, directory),
            "sasl.enabled.mechanisms": SCRAM,
            "sasl.mechanism.inter.broker.protocol": SCRAM,
            f"listener.name.sasl_ssl.{SCRAM.lower()}.sasl.jaas.config": (
                "org.apache.kafka.common.security.scram.ScramLoginModule required "
                f'username="{self.admin.name}" password="{self.admin.password}";'
            ),
        }
        if self.acls:
            properties["authorizer.class.name"] = STANDARD_AUTHORIZER
            properties["super.users"] = f"User:{self.admin.name};User:ANONYMOUS"
            properties["allow.everyone.if.no.acl.found"] = "false"
        return properties

    def format_arguments(self) -> list[str]:
        arguments: list[str] = []
        for user in self.all_users:
            arguments += ["--add-scram", user.format_argument()]
        return arguments

    def client_settings(self, bootstrap: str, user: ScramUser | None = None) -> dict[str, Any]:
        login = user or self.admin
        return {
            "bootstrap.servers": bootstrap,
            "security.protocol": "SASL_SSL",
            "sasl.mechanism": SCRAM,
            "sasl.username": login.name,
            "sasl.password": login.password,
            **_ca_settings(self.pki),
        }


Security = Plaintext | Tls | SaslSsl
PLAINTEXT = Plaintext()


def write_private(path: Path, text: str) -> Path:
    """Write a file that holds a secret (a password, a key's passphrase): created anew, readable by its owner only
    from the first byte (never world-readable for a moment, as a chmod after writing would leave it)."""
    path.unlink(missing_ok=True)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w") as file:
        file.write(text)
    return path
