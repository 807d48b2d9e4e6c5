"""ACLs on the harness's ACL-enforcing clusters (StandardAuthorizer): grant and revoke as the super user.

KRaft applies an ACL through the metadata log, so a broker enforces it a moment after CreateAcls
returns; ``grant`` and ``revoke`` wait until the broker's authorizer lists the change.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from confluent_kafka.admin import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    ResourcePatternType,
    ResourceType,
)

from kafka_migration.kafka.settings import client_settings

# Kafka's operation names (as kafka-acls and docs/security.md write them) -> confluent_kafka's.
OPERATIONS = {
    "Read": AclOperation.READ,
    "Write": AclOperation.WRITE,
    "Create": AclOperation.CREATE,
    "Delete": AclOperation.DELETE,
    "Alter": AclOperation.ALTER,
    "Describe": AclOperation.DESCRIBE,
    "DescribeConfigs": AclOperation.DESCRIBE_CONFIGS,
    "AlterConfigs": AclOperation.ALTER_CONFIGS,
    "IdempotentWrite": AclOperation.IDEMPOTENT_WRITE,
}
RESOURCES = {"topic": ResourceType.TOPIC, "group": ResourceType.GROUP, "cluster": ResourceType.BROKER}


@dataclass(frozen=True)
class Acl:
    """ALLOW ``operation`` on one literal resource (``cluster`` takes the name kafka-cluster) for ``principal``."""

    principal: str
    operation: str
    resource: str
    name: str

    def binding(self) -> AclBinding:
        name = "kafka-cluster" if self.resource == "cluster" else self.name
        return AclBinding(
            RESOURCES[self.resource],
            name,
            ResourcePatternType.LITERAL,
            self.principal,
            "*",
            OPERATIONS[self.operation],
            AclPermissionType.ALLOW,
        )

    def __str__(self) -> str:
        return f"{self.operation} on {self.resource} {self.name}"


def _admin(settings: dict[str, Any]) -> AdminClient:
    return AdminClient(client_settings(settings))


def _listed(admin: AdminClient, principal: str) -> set[tuple[Any, str, Any]]:
    found = AclBindingFilter(
        ResourceType.ANY, None, ResourcePatternType.ANY, principal, None, AclOperation.ANY, AclPermissionType.ANY
    )
    return {(b.restype, b.name, b.operation) for b in admin.describe_acls(found, request_timeout=15).result(20)}


def _wait(admin: AdminClient, principal: str, wanted: set[tuple[Any, str, Any]], present: bool) -> None:
    deadline = time.monotonic() + 30
    while True:
        listed = _listed(admin, principal)
        if (wanted <= listed) if present else not (wanted & listed):
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"ACLs of {principal} not {'applied' if present else 'removed'} within 30 s: {wanted}")
        time.sleep(0.1)


def _keys(acls: Iterable[Acl]) -> set[tuple[Any, str, Any]]:
    return {(a.binding().restype, a.binding().name, a.binding().operation) for a in acls}


def grant(admin_settings: dict[str, Any], acls: Iterable[Acl]) -> None:
    """Add ALLOW ACLs (as the super user ``admin_settings``) and wait until the broker enforces them."""
    wanted = list(acls)
    if not wanted:
        return
    admin = _admin(admin_settings)
    bindings = [a.binding() for a in wanted]
    for future in admin.create_acls(bindings, request_timeout=15).values():
        future.result(20)
    for principal in {a.principal for a in wanted}:
        _wait(admin, principal, _keys(a for a in wanted if a.principal == principal), present=True)


def revoke(admin_settings: dict[str, Any], acls: Iterable[Acl]) -> None:
    """Remove exactly these ACLs and wait until the broker no longer lists them."""
    wanted = list(acls)
    if not wanted:
        return
    admin = _admin(admin_settings)
    bindings = [a.binding() for a in wanted]
    filters = [
        AclBindingFilter(
            b.restype, b.name, b.resource_pattern_type, b.principal, b.host, b.operation, b.permission_type
        )
        for b in bindings
    ]
    for future in admin.delete_acls(filters, request_timeout=15).values():
        future.result(20)
    for principal in {a.principal for a in wanted}:
        _wait(admin, principal, _keys(a for a in wanted if a.principal == principal), present=False)


def revoke_all(admin_settings: dict[str, Any], principal: str) -> None:
    """Remove every ACL of ``principal`` and wait until the broker lists none."""
    admin = _admin(admin_settings)
    everything = AclBindingFilter(
        ResourceType.ANY, None, ResourcePatternType.ANY, principal, None, AclOperation.ANY, AclPermissionType.ANY
    )
    admin.delete_acls([everything], request_timeout=15)[everything].result(20)
    _wait(admin, principal, _listed(admin, principal), present=False)
