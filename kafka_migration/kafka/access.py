"""ACL bindings and SCRAM users, the door access/ goes through: read a cluster's ACL bindings, create and delete
exact ones; read and write SCRAM credentials, and log in as a user to prove one.

confluent-kafka (librdkafka) knows the TOPIC, GROUP, CLUSTER (its BROKER) and TRANSACTIONAL_ID resource types and
every operation but CREATE_TOKENS and DESCRIBE_TOKENS. Bindings it cannot name (DELEGATION_TOKEN and USER
resources, the token operations) come back as UNKNOWN: when there are any, they are read again, and written and
deleted, through kafka-python's public ACL methods (``kafka_python``), which name every resource type and
operation. One binding model (``model.access.AclBinding``) for both clients; a binding neither can read is
counted, never dropped silently.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kafka_migration.kafka.acls import READ_ACCESS, WRITE_ACCESS
from kafka_migration.kafka.clients import KafkaCluster
from kafka_migration.kafka.kafka_python import KafkaPythonClient
from kafka_migration.model.access import (
    AclBinding,
    LoginOutcome,
    Operation,
    Password,
    PatternType,
    PermissionType,
    ResourceType,
    ScramCredential,
    ScramMechanism,
)

# Kafka's names <-> confluent-kafka's enum member names, where they differ.
_TO_CLIENT = {ResourceType.CLUSTER: "BROKER"}
_FROM_CLIENT = {"BROKER": ResourceType.CLUSTER}
# A filter's field left open (matches every value): librdkafka takes None, confluent-kafka's stubs say str.
_OPEN: Any = None


@dataclass(frozen=True)
class ReadBindings:
    """A cluster's bindings as read, and how many it holds that the client cannot name (see the module)."""

    bindings: tuple[AclBinding, ...]
    unreadable: int


def _binding(found: Any) -> AclBinding | None:
    names = (found.restype, found.resource_pattern_type, found.operation, found.permission_type)
    if any(n.name == "UNKNOWN" for n in names):
        return None
    return AclBinding(
        _FROM_CLIENT.get(found.restype.name) or ResourceType(found.restype.name),
        found.name,
        PatternType(found.resource_pattern_type.name),
        found.principal,
        found.host,
        Operation(found.operation.name),
        PermissionType(found.permission_type.name),
    )


def _client_binding(binding: AclBinding) -> Any:
    from confluent_kafka.admin import AclBinding as ClientBinding
    from confluent_kafka.admin import AclOperation, AclPermissionType, ResourcePatternType
    from confluent_kafka.admin import ResourceType as ClientResourceType

    return ClientBinding(
        ClientResourceType[_TO_CLIENT.get(binding.resource_type, binding.resource_type)],
        binding.resource_name,
        ResourcePatternType[binding.pattern_type],
        binding.principal,
        binding.host,
        AclOperation[binding.operation],
        AclPermissionType[binding.permission],
    )


def _python_binding(found: Any) -> AclBinding | None:
    pattern = found.resource_pattern
    names = (pattern.resource_type, pattern.pattern_type, found.operation, found.permission_type)
    if any(n.name == "UNKNOWN" for n in names):
        return None
    return AclBinding(
        ResourceType(pattern.resource_type.name),
        pattern.resource_name,
        PatternType(pattern.pattern_type.name),
        found.principal,
        found.host,
        Operation(found.operation.name),
        PermissionType(found.permission_type.name),
    )


def _python_acl(binding: AclBinding) -> Any:
    from kafka.admin import ACL, ACLOperation, ACLPermissionType, ACLResourcePatternType, ResourcePattern
    from kafka.admin import ResourceType as ClientResourceType

    return ACL(
        binding.principal,
        binding.host,
        ACLOperation[binding.operation],
        ACLPermissionType[binding.permission],
        ResourcePattern(
            ClientResourceType[binding.resource_type],
            binding.resource_name,
            ACLResourcePatternType[binding.pattern_type],
        ),
    )


def client_supports(binding: AclBinding) -> bool:
    """Whether confluent-kafka can write this binding (see the module)."""
    from confluent_kafka.admin import AclOperation
    from confluent_kafka.admin import ResourceType as ClientResourceType

    kind = _TO_CLIENT.get(binding.resource_type, binding.resource_type)
    return kind in ClientResourceType.__members__ and binding.operation in AclOperation.__members__


class AccessCluster(KafkaCluster):
    """A cluster's access control, read and written through the admin client (kafka-python's for what
    confluent-kafka cannot name; see the module)."""

    _python: KafkaPythonClient | None = None

    @property
    def python(self) -> KafkaPythonClient:
        if self._python is None:
            self._python = KafkaPythonClient(self.config, self.timeout)
        return self._python

    def close(self) -> None:
        """Close kafka-python's connections, if any were opened."""
        if self._python is not None:
            self._python.close()
            self._python = None

    def _python_bindings(self) -> list[AclBinding]:
        """Every binding, read with kafka-python (one DescribeAcls with a match-all filter)."""
        from kafka.admin import (
            ACLFilter,
            ACLOperation,
            ACLPermissionType,
            ACLResourcePatternType,
            ResourcePatternFilter,
        )
        from kafka.admin import ResourceType as ClientResourceType

        everything = ACLFilter(
            None,
            None,
            ACLOperation.ANY,
            ACLPermissionType.ANY,
            ResourcePatternFilter(ClientResourceType.ANY, None, ACLResourcePatternType.ANY),
        )
        found, _ = self.python.call(lambda: self.python.admin.describe_acls(everything), "describe ACLs", READ_ACCESS)
        return [b for b in (_python_binding(acl) for acl in found) if b is not None]

    def bindings(self) -> ReadBindings:
        """Every ACL binding of the cluster (one DescribeAcls request with a match-all filter)."""
        from confluent_kafka.admin import AclBindingFilter, AclOperation, AclPermissionType, ResourcePatternType
        from confluent_kafka.admin import ResourceType as ClientResourceType

        everything = AclBindingFilter(
            ClientResourceType.ANY,
            _OPEN,
            ResourcePatternType.ANY,
            _OPEN,
            _OPEN,
            AclOperation.ANY,
            AclPermissionType.ANY,
        )
        found = self._result(
            self.admin.describe_acls(everything, request_timeout=self.timeout), "describe ACLs", READ_ACCESS
        )
        read = [_binding(b) for b in found]
        known = [b for b in read if b is not None]
        unknown = len(read) - len(known)
        if unknown:  # DELEGATION_TOKEN or USER resources, token operations: kafka-python names them
            beyond = {b for b in self._python_bindings() if not client_supports(b)}
            known += beyond
            unknown = max(0, unknown - len(beyond))
        return ReadBindings(tuple(sorted(set(known))), unknown)

    def create(self, bindings: Sequence[AclBinding]) -> None:
        """Create the bindings (creating one that exists is a no-op in Kafka: a retried sync is safe)."""
        ours = [b for b in bindings if client_supports(b)]
        beyond = [b for b in bindings if not client_supports(b)]
        if ours:
            futures = self.admin.create_acls([_client_binding(b) for b in ours], request_timeout=self.timeout)
            for future in futures.values():
                self._result(future, "create ACL bindings", WRITE_ACCESS)
        if beyond:
            acls = [_python_acl(b) for b in beyond]
            done = self.python.call(lambda: self.python.admin.create_acls(acls), "create ACL bindings", WRITE_ACCESS)
            for error in done["failed"]:  # kafka-python's error classes
                raise self.python.refused(error(), "create ACL bindings", WRITE_ACCESS)

    def delete(self, bindings: Iterable[AclBinding]) -> int:
        """Delete exactly these bindings (each filter names every field: nothing else matches); returns how many
        the cluster deleted."""
        from confluent_kafka.admin import AclBindingFilter

        wanted = list(bindings)
        beyond = [b for b in wanted if not client_supports(b)]
        deleted = self._python_delete(beyond) if beyond else 0
        filters = []
        for binding in (b for b in wanted if client_supports(b)):
            exact = _client_binding(binding)
            filters.append(
                AclBindingFilter(
                    exact.restype,
                    exact.name,
                    exact.resource_pattern_type,
                    exact.principal,
                    exact.host,
                    exact.operation,
                    exact.permission_type,
                )
            )
        if not filters:
            return deleted
        futures = self.admin.delete_acls(filters, request_timeout=self.timeout)
        return deleted + sum(len(self._result(f, "delete ACL bindings", WRITE_ACCESS)) for f in futures.values())

    def _python_delete(self, bindings: Sequence[AclBinding]) -> int:
        """Delete exactly these bindings with kafka-python (an exact binding is its own filter)."""
        acls = [_python_acl(b) for b in bindings]
        results = self.python.call(lambda: self.python.admin.delete_acls(acls), "delete ACL bindings", WRITE_ACCESS)
        count = 0
        for _, matched, error in results:
            if error.errno:
                raise self.python.refused(error(), "delete ACL bindings", WRITE_ACCESS)
            count += len(matched)
        return count

    def scram_credentials(self) -> tuple[ScramCredential, ...]:
        """Every SCRAM credential of the cluster: user, mechanism, iterations (the secret cannot be read)."""
        future = self.admin.describe_user_scram_credentials(request_timeout=self.timeout)
        found = self._result(future, "describe SCRAM users", READ_ACCESS)
        return tuple(
            sorted(
                ScramCredential(user, ScramMechanism(info.mechanism.name.replace("_", "-")), info.iterations)
                for user, description in found.items()
                for info in description.scram_credential_infos
            )
        )

    def upsert_scram(self, credentials: Sequence[ScramCredential], passwords: Mapping[str, Password]) -> None:
        """Create (or replace) the credentials with the operator's passwords; the client salts and hashes them,
        only the derived keys reach the broker."""
        from confluent_kafka.admin import ScramCredentialInfo, UserScramCredentialUpsertion
        from confluent_kafka.admin import ScramMechanism as ClientMechanism

        if not credentials:
            return
        alterations = [
            UserScramCredentialUpsertion(
                c.user,
                ScramCredentialInfo(ClientMechanism[c.mechanism.name], c.iterations),
                passwords[c.user].password.encode(),
                passwords[c.user].salt,
            )
            for c in credentials
        ]
        futures = self.admin.alter_user_scram_credentials(alterations, request_timeout=self.timeout)
        for future in futures.values():
            self._result(future, "create SCRAM credentials", WRITE_ACCESS)

    def login(self, credential: ScramCredential, password: Password) -> tuple[LoginOutcome, str | None]:
        """Log in as the user with its password and mechanism (a metadata request): proven, failed with the broker's
        reason, or not provable when the cluster's listener does not use SASL."""
        from confluent_kafka import KafkaException
        from confluent_kafka.admin import AdminClient

        from kafka_migration.kafka.settings import client_settings

        protocol = str(self.config.settings.get("security.protocol", "PLAINTEXT")).upper()
        if not protocol.startswith("SASL"):
            return LoginOutcome.NOT_PROVABLE, f"the {self.config.role} cluster's listener is {protocol}, not SASL"
        settings = {
            **self.config.settings,
            "sasl.mechanism": credential.mechanism.value,
            "sasl.username": credential.user,
            "sasl.password": password.password,
        }
        try:
            AdminClient(client_settings(settings)).list_topics(timeout=self.timeout)
        except KafkaException as exc:
            error = exc.args[0] if exc.args else exc
            reason = error.str() if hasattr(error, "str") else str(error)
            reason = reason.replace(password.password, "***")
            if "transport failure" in reason.lower():  # the broker closed the handshake: often the mechanism
                reason += f" (does the listener enable {credential.mechanism}? see sasl.enabled.mechanisms)"
            return LoginOutcome.FAILED, reason
        return LoginOutcome.PROVEN, None
