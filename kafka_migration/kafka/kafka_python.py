"""kafka-python, for the admin requests librdkafka has no API for: client quotas (DescribeClientQuotas,
AlterClientQuotas) and ACL bindings on DELEGATION_TOKEN and USER resources (with the CREATE_TOKENS and
DESCRIBE_TOKENS operations).

The product's connection settings are librdkafka's (``ClusterConfig.settings``); this module is the one place
that turns them into kafka-python's arguments, and refuses (naming the setting, never its value) what kafka-python
cannot honour, so that a setting is never silently dropped. The TLS context is ``kafka.tls.tls_context``'s, the
one translation of the ``ssl.*`` settings, and the addresses ``model.bootstrap``'s, the one parser.
kafka-python's admin client logs its whole configuration, password included, at DEBUG when it starts: that one
record is filtered out here.

Two kafka-python clients serve two needs: ``KafkaAdminClient`` for its public ACL methods (``describe_acls``,
``create_acls``, ``delete_acls``), and ``KafkaNetClient`` (kafka-python's general client, the one its admin,
producer and consumer are built on) for the quota messages, sent with its public ``send_and_receive``:
kafka-python 3.0 defines the messages (``kafka.protocol.admin.client_quotas``) but no admin method for them.
"""

from __future__ import annotations

import contextlib
import logging
import ssl
import tempfile
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from kafka_migration.exceptions import ClusterUnreachableError, ConfigurationError, MigrationError
from kafka_migration.kafka.acls import Permission, refusal
from kafka_migration.kafka.tls import check_tls_settings, tls_context
from kafka_migration.model.bootstrap import broker_addresses
from kafka_migration.model.config import ClusterConfig, scrub

T = TypeVar("T")

# librdkafka settings kafka-python has no counterpart for that change how a client authenticates or what it
# trusts: refused rather than ignored (a client that silently skipped them would connect as someone else).
_UNSUPPORTED = (
    "ssl.keystore.",
    "ssl.engine.",
    "ssl.providers",
    "ssl.certificate.verify_cb",
    "sasl.oauthbearer.",
    "sasl.kerberos.keytab",
    "sasl.kerberos.kinit.cmd",
    "sasl.kerberos.principal",
)
_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "GSSAPI")


class _NoConfigRecord(logging.Filter):
    """Drops kafka-python's DEBUG record of the admin client's configuration (it holds the SASL password)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("Starting KafkaAdminClient with configuration")


_FILTER = _NoConfigRecord()


def _quiet_configuration_log() -> None:
    logger = logging.getLogger("kafka.admin.client")
    if _FILTER not in logger.filters:
        logger.addFilter(_FILTER)


def _refuse(role: str, setting: str, why: str) -> ConfigurationError:
    return ConfigurationError(
        f"The {role} cluster's setting {setting} cannot be used for client quotas and token/user ACLs "
        f"(read and written with kafka-python): {why}."
    )


def kafka_python_settings(config: ClusterConfig, timeout: float) -> dict[str, Any]:
    """kafka-python's arguments for the cluster (see the module); refuses what it cannot honour."""
    settings, role = config.settings, config.role
    protocol = str(settings.get("security.protocol", "PLAINTEXT")).upper()
    if protocol not in ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"):
        raise _refuse(role, "security.protocol", f"{protocol!r} is not PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL")
    in_use = ("ssl." if protocol.endswith("SSL") else "-", "sasl." if protocol.startswith("SASL") else "-")
    for name in settings:  # settings of a layer the protocol does not use are inert, as in librdkafka
        if name.startswith(in_use) and any(name.startswith(prefix) for prefix in _UNSUPPORTED):
            raise _refuse(role, name, "kafka-python has no counterpart; use a SASL or certificate login here")
    found: dict[str, Any] = {
        "bootstrap_servers": [str(address) for address in broker_addresses(str(settings["bootstrap.servers"]))],
        "client_id": str(settings.get("client.id", "kafka-migration")),
        "security_protocol": protocol,
        "request_timeout_ms": int(timeout * 1000),
        "bootstrap_timeout_ms": int(timeout * 1000),
    }
    if protocol.startswith("SASL"):
        mechanism = str(settings.get("sasl.mechanism", settings.get("sasl.mechanisms", "GSSAPI"))).upper()
        if mechanism not in _MECHANISMS:
            raise _refuse(role, "sasl.mechanism", f"{mechanism!r} is not one of {', '.join(_MECHANISMS)}")
        found["sasl_mechanism"] = mechanism
        if mechanism == "GSSAPI":
            found["sasl_kerberos_service_name"] = str(settings.get("sasl.kerberos.service.name", "kafka"))
        else:
            found["sasl_plain_username"] = settings.get("sasl.username")
            found["sasl_plain_password"] = settings.get("sasl.password")
    return found


class KafkaPythonClient:
    """kafka-python's clients for one cluster, opened on first use, closed by ``close`` (or ``with``)."""

    def __init__(self, config: ClusterConfig, timeout: float = 15.0) -> None:
        self.config = config
        self.timeout = timeout
        self._admin: Any = None
        self._net: Any = None

    def __enter__(self) -> KafkaPythonClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _arguments(self) -> dict[str, Any]:
        arguments = kafka_python_settings(self.config, self.timeout)
        if arguments["security_protocol"] in ("SSL", "SASL_SSL"):
            check_tls_settings(self.config.role, self.config.settings)
            with tempfile.TemporaryDirectory(prefix="km-tls-") as scratch:
                try:
                    arguments["ssl_context"], _ = tls_context(self.config.settings, Path(scratch))
                except (OSError, ssl.SSLError) as exc:
                    raise ConfigurationError(
                        scrub(
                            f"The {self.config.role} cluster's TLS settings cannot be loaded ({exc}); check ssl.ca.*, "
                            "ssl.certificate.*, ssl.key.*.",
                            self.config.settings,
                        )
                    ) from None
        return arguments

    def _open(self, make: Callable[[dict[str, Any]], T]) -> T:
        _quiet_configuration_log()
        arguments = self._arguments()
        try:
            client = make(arguments)
        except Exception as exc:  # kafka-python raises many kinds while connecting
            raise self.unreachable(exc) from exc
        # A client nobody closed is closed when this object goes: its background thread would otherwise keep
        # reconnecting (and logging) to a cluster long gone, until the process ends.
        weakref.finalize(self, _close_quietly, client)
        return client

    @property
    def admin(self) -> Any:
        """kafka-python's ``KafkaAdminClient`` (its public ACL methods)."""
        if self._admin is None:
            from kafka import KafkaAdminClient

            self._admin = self._open(lambda arguments: KafkaAdminClient(**arguments))
        return self._admin

    def send(self, request: Any) -> Any:
        """Send one protocol request to the least loaded broker and return its response (kafka-python's
        ``KafkaNetClient.send_and_receive``; the version is the highest both sides speak)."""
        from kafka.errors import KafkaError

        if self._net is None:
            from kafka.net.compat import KafkaNetClient

            def connect(arguments: dict[str, Any]) -> Any:
                arguments.pop("bootstrap_timeout_ms")
                client = KafkaNetClient(**arguments)
                client.check_version(timeout_ms=int(self.timeout * 1000))  # bootstraps: metadata and versions
                return client

            self._net = self._open(connect)
        try:
            node = self._net.least_loaded_node(bootstrap_fallback=True)
            return self._net.send_and_receive(node, request, timeout_ms=int(self.timeout * 1000))
        except KafkaError as exc:
            raise self.unreachable(exc) from exc

    def call(self, request: Callable[[], T], what: str, needs: Permission) -> T:
        """Run one admin call (``lambda: client.admin.describe_acls(...)``), its errors named (see ``refused``)."""
        from kafka.errors import AuthorizationError, BrokerResponseError, KafkaError

        try:
            return request()
        except (AuthorizationError, BrokerResponseError) as exc:
            raise self.refused(exc, what, needs) from exc
        except KafkaError as exc:
            raise self.unreachable(exc) from exc

    def unreachable(self, exc: BaseException) -> MigrationError:
        """A connection failure, named with the cluster and the settings to check (never a secret)."""
        name = type(exc).__name__
        if isinstance(exc, ConfigurationError):
            return exc
        return ClusterUnreachableError(
            scrub(
                f"Cannot use the {self.config.role} cluster at {self.config.bootstrap} through kafka-python (for "
                f"client quotas and token/user ACLs): {name}: {exc}. Check the bootstrap address and the security "
                f"settings (security.protocol, ssl.*, sasl.*) of the {self.config.role} connection.",
                self.config.settings,
            )
        )

    def refused(self, exc: BaseException, what: str, needs: Permission) -> MigrationError:
        """A broker's error answer: an authorization failure names the permission to grant, else the error."""
        from kafka.errors import AuthorizationError

        if isinstance(exc, AuthorizationError):
            return refusal(self.config.role, self.config.settings, [needs], cause=type(exc).__name__)
        return MigrationError(
            scrub(f"{self.config.role} cluster {self.config.bootstrap}: could not {what}: {exc}", self.config.settings)
        )

    def close(self) -> None:
        for client in (self._admin, self._net):
            if client is not None:
                _close_quietly(client)
        self._admin = self._net = None


def _close_quietly(client: Any) -> None:
    """Close a kafka-python client after use (twice is harmless): nothing is left to report then."""
    with contextlib.suppress(Exception):
        client.close()
