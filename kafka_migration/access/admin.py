"""The Kafka calls the access capability needs: read a cluster's ACL bindings, create and delete exact ones.

confluent-kafka (librdkafka) knows the TOPIC, GROUP, CLUSTER (its BROKER) and TRANSACTIONAL_ID resource types and
every operation but CREATE_TOKENS and DESCRIBE_TOKENS. Bindings it cannot name (DELEGATION_TOKEN and USER
resources, the token operations) come back as UNKNOWN: they are counted, so that a plan says how many bindings
it could not read, never drops them silently.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kafka_migration.kafka.acls import Permission
from kafka_migration.kafka.clients import KafkaCluster
from kafka_migration.model.access import CLUSTER, AclBinding, Password, ScramCredential

# Kafka's names <-> confluent-kafka's enum member names, where they differ.
_TO_CLIENT = {CLUSTER: "BROKER"}
_FROM_CLIENT = {"BROKER": CLUSTER}
DESCRIBE_ACLS = Permission("Describe", "cluster", (), "to read its ACL bindings")
ALTER_ACLS = Permission("Alter", "cluster", (), "to create and delete ACL bindings")
DESCRIBE_USERS = Permission("Describe", "cluster", (), "to read its SCRAM users")
ALTER_USERS = Permission("Alter", "cluster", (), "to create SCRAM credentials")
PROVEN, FAILED, NOT_PROVABLE = "proven", "failed", "not_provable"  # a login check's outcome


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
        _FROM_CLIENT.get(found.restype.name, found.restype.name),
        found.name,
        found.resource_pattern_type.name,
        found.principal,
        found.host,
        found.operation.name,
        found.permission_type.name,
    )


def _client_binding(binding: AclBinding) -> Any:
    from confluent_kafka.admin import AclBinding as ClientBinding
    from confluent_kafka.admin import AclOperation, AclPermissionType, ResourcePatternType, ResourceType

    return ClientBinding(
        ResourceType[_TO_CLIENT.get(binding.resource_type, binding.resource_type)],
        binding.resource_name,
        ResourcePatternType[binding.pattern_type],
        binding.principal,
        binding.host,
        AclOperation[binding.operation],
        AclPermissionType[binding.permission],
    )


def client_supports(binding: AclBinding) -> bool:
    """Whether confluent-kafka can write this binding (see the module)."""
    from confluent_kafka.admin import AclOperation, ResourceType

    kind = _TO_CLIENT.get(binding.resource_type, binding.resource_type)
    return kind in ResourceType.__members__ and binding.operation in AclOperation.__members__


class AccessCluster(KafkaCluster):
    """A cluster's access control, read and written through the admin client."""

    def bindings(self) -> ReadBindings:
        """Every ACL binding of the cluster (one DescribeAcls request with a match-all filter)."""
        from confluent_kafka.admin import (
            AclBindingFilter,
            AclOperation,
            AclPermissionType,
            ResourcePatternType,
            ResourceType,
        )

        everything = AclBindingFilter(
            ResourceType.ANY, None, ResourcePatternType.ANY, None, None, AclOperation.ANY, AclPermissionType.ANY
        )
        found = self._result(
            self.admin.describe_acls(everything, request_timeout=self.timeout), "describe ACLs", DESCRIBE_ACLS
        )
        read = [_binding(b) for b in found]
        known = tuple(sorted(b for b in read if b is not None))
        return ReadBindings(known, len(read) - len(known))

    def create(self, bindings: Sequence[AclBinding]) -> None:
        """Create the bindings (creating one that exists is a no-op in Kafka: a retried sync is safe)."""
        if not bindings:
            return
        futures = self.admin.create_acls([_client_binding(b) for b in bindings], request_timeout=self.timeout)
        for future in futures.values():
            self._result(future, "create ACL bindings", ALTER_ACLS)

    def delete(self, bindings: Iterable[AclBinding]) -> int:
        """Delete exactly these bindings (each filter names every field: nothing else matches); returns how many
        the cluster deleted."""
        from confluent_kafka.admin import AclBindingFilter

        filters = []
        for binding in bindings:
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
            return 0
        futures = self.admin.delete_acls(filters, request_timeout=self.timeout)
        return sum(len(self._result(f, "delete ACL bindings", ALTER_ACLS)) for f in futures.values())

    def scram_credentials(self) -> tuple[ScramCredential, ...]:
        """Every SCRAM credential of the cluster: user, mechanism, iterations (the secret cannot be read)."""
        future = self.admin.describe_user_scram_credentials(request_timeout=self.timeout)
        found = self._result(future, "describe SCRAM users", DESCRIBE_USERS)
        return tuple(
            sorted(
                ScramCredential(user, info.mechanism.name.replace("_", "-"), info.iterations)
                for user, description in found.items()
                for info in description.scram_credential_infos
            )
        )

    def upsert_scram(self, credentials: Sequence[ScramCredential], passwords: Mapping[str, Password]) -> None:
        """Create (or replace) the credentials with the operator's passwords; the client salts and hashes them,
        only the derived keys reach the broker."""
        from confluent_kafka.admin import ScramCredentialInfo, ScramMechanism, UserScramCredentialUpsertion

        if not credentials:
            return
        alterations = [
            UserScramCredentialUpsertion(
                c.user,
                ScramCredentialInfo(ScramMechanism[c.mechanism.replace("-", "_")], c.iterations),
                passwords[c.user].password.encode(),
                passwords[c.user].salt,
            )
            for c in credentials
        ]
        futures = self.admin.alter_user_scram_credentials(alterations, request_timeout=self.timeout)
        for future in futures.values():
            self._result(future, "create SCRAM credentials", ALTER_USERS)

    def login(self, credential: ScramCredential, password: Password) -> tuple[str, str | None]:
        """Log in as the user with its password and mechanism (a metadata request): PROVEN, FAILED with the
        broker's reason, or NOT_PROVABLE when the cluster's listener does not use SASL."""
        from confluent_kafka import KafkaException
        from confluent_kafka.admin import AdminClient

        from kafka_migration.kafka.clients import client_settings

        protocol = str(self.config.settings.get("security.protocol", "PLAINTEXT")).upper()
        if not protocol.startswith("SASL"):
            return NOT_PROVABLE, f"the {self.config.role} cluster's listener is {protocol}, not SASL"
        settings = {
            **self.config.settings,
            "sasl.mechanism": credential.mechanism,
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
            return FAILED, reason
        return PROVEN, None
