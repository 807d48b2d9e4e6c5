"""Apache Kafka's ACLs as the pipeline meets them: what a request needs, and one line naming the ACL to add.

A cluster with an authorizer refuses a request with TOPIC_AUTHORIZATION_FAILED,
GROUP_AUTHORIZATION_FAILED or CLUSTER_AUTHORIZATION_FAILED, which says neither which
operation was missing nor how to grant it. The pipeline knows both: each check names the
cluster, the principal, the operation, the resources and the ``kafka-acls`` command that adds
them. Pure values and text; the checks themselves are in ``kafka/permissions.py``.

Kafka's implications (Read, Write, Delete and Alter imply Describe; AlterConfigs implies
DescribeConfigs) decide what is listed as needed: Read on a topic is enough to see it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kafka_migration.exceptions import AuthorizationError

# Error names (confluent_kafka.KafkaError.name()) of a request refused by the authorizer.
AUTHORIZATION_FAILURES = frozenset(
    {
        "TOPIC_AUTHORIZATION_FAILED",
        "GROUP_AUTHORIZATION_FAILED",
        "CLUSTER_AUTHORIZATION_FAILED",
        "TRANSACTIONAL_ID_AUTHORIZATION_FAILED",
    }
)

# confluent_kafka.admin.AclOperation names -> the names kafka-acls and the docs use.
OPERATIONS = {
    "READ": "Read",
    "WRITE": "Write",
    "CREATE": "Create",
    "DELETE": "Delete",
    "ALTER": "Alter",
    "DESCRIBE": "Describe",
    "DESCRIBE_CONFIGS": "DescribeConfigs",
    "ALTER_CONFIGS": "AlterConfigs",
    "IDEMPOTENT_WRITE": "IdempotentWrite",
    "CLUSTER_ACTION": "ClusterAction",
}
# What an allowed operation implies (Kafka's AclEntry.supportedOperations / the authorizer's implication).
_IMPLIES = {
    "Describe": frozenset({"Read", "Write", "Delete", "Alter"}),
    "DescribeConfigs": frozenset({"AlterConfigs"}),
}
_OPTION = {"topic": "--topic", "group": "--group", "cluster": "--cluster"}


@dataclass(frozen=True)
class Permission:
    """One operation on named resources of one kind (``topic``, ``group`` or ``cluster``), and what it is for."""

    operation: str  # Kafka's name: Read, Write, Create, Describe, DescribeConfigs
    resource: str
    names: tuple[str, ...]
    purpose: str

    def shown(self) -> str:
        if self.resource == "cluster":
            return f"{self.operation} on the cluster ({self.purpose})"
        kind = self.resource + ("s" if len(self.names) > 1 else "")
        listed = ", ".join(self.names[:5]) + (f" ... ({len(self.names)} in all)" if len(self.names) > 5 else "")
        return f"{self.operation} on {kind} {listed} ({self.purpose})"


# What an access sync needs of each cluster, on the Cluster resource (KIP-430 reports it there): declared once, for
# the check before a sync reads anything (access/permissions.py) and for the refusal of a call that fails anyway
# (kafka/access.py, kafka/quotas.py).
READ_ACCESS = Permission("Describe", "cluster", (), "to read its ACL bindings and SCRAM users")
READ_QUOTAS = Permission("DescribeConfigs", "cluster", (), "to read its client quotas")
WRITE_ACCESS = Permission("Alter", "cluster", (), "to create and delete ACL bindings and SCRAM credentials")
WRITE_QUOTAS = Permission("AlterConfigs", "cluster", (), "to set client quotas")
ACCESS_SYNC_READS = (READ_ACCESS, READ_QUOTAS)  # on both clusters
ACCESS_SYNC_WRITES = (WRITE_ACCESS, WRITE_QUOTAS)  # on the target, unless the sync is a dry run


def allows(granted: Iterable[str], operation: str) -> bool:
    """Whether the operations a broker reports as authorized (KIP-430, Kafka's names) allow ``operation``."""
    have = set(granted)
    return operation in have or "All" in have or bool(_IMPLIES.get(operation, frozenset()) & have)


def operation_names(operations: Iterable[Any] | None) -> frozenset[str] | None:
    """confluent_kafka AclOperation values as Kafka's names; None when the broker did not say (no KIP-430)."""
    if operations is None:
        return None
    return frozenset(OPERATIONS.get(op.name, op.name.title()) for op in operations)


def principal_of(settings: Mapping[str, Any]) -> str:
    """The principal a connection authenticates as, as far as its settings tell."""
    mechanism = str(settings.get("sasl.mechanism", settings.get("sasl.mechanisms", ""))).upper()
    protocol = str(settings.get("security.protocol", "plaintext")).lower()
    if protocol.startswith("sasl") and settings.get("sasl.username") and mechanism != "GSSAPI":
        return f"User:{settings['sasl.username']}"
    if protocol == "ssl":
        return "the principal of the client certificate (User:<its subject>, after ssl.principal.mapping.rules)"
    return "this connection's principal"


def acl_command(bootstrap: str, principal: str, operations: Sequence[str], resource: str, names: Sequence[str]) -> str:
    """The kafka-acls command that grants ``operations`` on the named resources."""
    who = principal if principal.startswith("User:") else "User:<principal>"
    command = f"kafka-acls.sh --bootstrap-server {bootstrap} --command-config <admin.properties> --add"
    command += f" --allow-principal {who}"
    command += "".join(f" --operation {op}" for op in operations)
    if resource == "cluster":
        return command + " --cluster"
    return command + "".join(f" {_OPTION[resource]} {name}" for name in names)


def refusal(
    role: str,
    settings: Mapping[str, Any],
    missing: Sequence[Permission],
    outcome: str = "Nothing was written.",
    cause: str | None = None,
) -> AuthorizationError:
    """One line: the cluster, the principal, each missing operation on its resources, and the commands to add them."""
    bootstrap = str(settings.get("bootstrap.servers", ""))
    principal = principal_of(settings)
    said = f" ({cause})" if cause else ""
    needs = "; ".join(p.shown() for p in missing)
    commands: dict[tuple[str, tuple[str, ...]], list[str]] = {}
    for p in missing:
        operations = commands.setdefault((p.resource, p.names), [])
        if p.operation not in operations:
            operations.append(p.operation)
    grants = "; ".join(
        acl_command(bootstrap, principal, ops, resource, names) for (resource, names), ops in commands.items()
    )
    return AuthorizationError(
        f"The {role} cluster {bootstrap} does not allow {principal}: {needs}{said}. "
        f"Add the ACL{'s' if len(commands) > 1 or len(missing) > 1 else ''}: {grants}. {outcome}"
    )


def authenticates(settings: Mapping[str, Any]) -> bool:
    """Whether the connection has a principal of its own (SASL, or a client certificate), as ACLs are written for."""
    protocol = str(settings.get("security.protocol", "plaintext")).lower()
    certificates = ("ssl.certificate.location", "ssl.certificate.pem", "ssl.keystore.location")
    client_cert = any(settings.get(k) for k in certificates)
    return protocol.startswith("sasl") or (protocol == "ssl" and client_cert)


def unlisted_topics_hint(settings: Mapping[str, Any]) -> str:
    """A cluster with ACLs lists only the topics the principal may Describe: the ACL that makes one appear."""
    if not authenticates(settings):
        return ""
    principal = principal_of(settings)
    command = acl_command(str(settings.get("bootstrap.servers", "")), principal, ["Read"], "topic", ["<topic>"])
    return (
        f"On a cluster that enforces ACLs, {principal} sees only the topics it may Describe; to copy a topic "
        f"that is not listed, allow it Read (which implies Describe): {command}"
    )


def unlisted_groups_hint(settings: Mapping[str, Any]) -> str:
    """ListGroups returns only the groups the principal may Describe (all of them with Describe on the cluster)."""
    if not authenticates(settings):
        return ""
    principal = principal_of(settings)
    command = acl_command(str(settings.get("bootstrap.servers", "")), principal, ["Describe"], "group", ["<group>"])
    return (
        f"On a cluster that enforces ACLs, {principal} sees only the consumer groups it may Describe; to move a "
        f"group that is not listed: {command}"
    )
