"""kafka/access.py: a binding read from confluent-kafka and written back is the same binding (the cluster is its
BROKER; a name it does not know is unreadable, not guessed); deleting ACL bindings deletes exactly the bindings
named, through filters that name every field (Kafka's DeleteAcls deletes every binding a filter matches; a field
left open matches every value)."""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Future
from typing import Any

from kafka_migration.kafka.access import AccessCluster, _binding, _client_binding
from kafka_migration.model.access import AclBinding, PatternType, PermissionType, ResourceType
from kafka_migration.model.config import ClusterConfig

_FIELDS = ("restype", "name", "resource_pattern_type", "principal", "host", "operation", "permission_type")


def _matches(acl_filter: Any, binding: Any) -> bool:
    """Kafka's filter match, field by field: None or ANY matches every value."""
    for name in _FIELDS:
        wanted = getattr(acl_filter, name)
        if wanted is None or getattr(wanted, "name", None) == "ANY":
            continue
        if wanted != getattr(binding, name):
            return False
    return True


def test_a_binding_read_from_the_client_is_the_one_written() -> None:
    """Every resource type confluent-kafka names, the cluster (its BROKER) among them, round trips as the model's
    members; a binding with a name the client does not know (UNKNOWN) reads as unreadable."""
    for kind in ("TOPIC", "GROUP", "CLUSTER", "TRANSACTIONAL_ID"):
        binding = AclBinding(kind, "x", "PREFIXED", "User:app", "*", "WRITE", "DENY")
        read = _binding(_client_binding(binding))
        assert read == binding and read is not None and read.resource_type is ResourceType(kind)
    assert (
        _client_binding(AclBinding("CLUSTER", "kafka-cluster", "LITERAL", "User:a", "*", "ALTER", "ALLOW")).restype.name
        == "BROKER"
    )

    class Unknown:
        name = "UNKNOWN"

    found = _client_binding(AclBinding("TOPIC", "x", "LITERAL", "User:app", "*", "READ", "ALLOW"))
    found.operation = Unknown()
    assert _binding(found) is None


class _DeletingAdmin:
    """The admin client's delete_acls over the bindings a cluster holds."""

    def __init__(self, held: Sequence[AclBinding]) -> None:
        self.held = [_client_binding(b) for b in held]

    def delete_acls(self, filters: Sequence[Any], request_timeout: float) -> dict[int, Future[list[Any]]]:
        answers: dict[int, Future[list[Any]]] = {}
        for i, acl_filter in enumerate(filters):
            matched = [b for b in self.held if _matches(acl_filter, b)]
            self.held = [b for b in self.held if b not in matched]
            answers[i] = Future()
            answers[i].set_result(matched)
        return answers


def test_deleting_a_binding_leaves_the_same_binding_of_another_host() -> None:
    """The tool removes its stale ``*`` binding; someone else's binding of the same principal, resource and
    operation from one host differs only in the host, and stays."""
    mine = AclBinding(ResourceType.TOPIC, "orders", PatternType.LITERAL, "User:app", "*", "READ", PermissionType.ALLOW)
    theirs = AclBinding(
        ResourceType.TOPIC, "orders", PatternType.LITERAL, "User:app", "10.0.0.5", "READ", PermissionType.ALLOW
    )
    prefixed = AclBinding(
        ResourceType.TOPIC, "orders", PatternType.PREFIXED, "User:app", "*", "READ", PermissionType.ALLOW
    )  # another field, for contrast
    admin = _DeletingAdmin([mine, theirs, prefixed])
    cluster = AccessCluster(ClusterConfig("target", {"bootstrap.servers": "tgt:9092"}))
    cluster._admin = admin  # the cached admin client, replaced

    assert cluster.delete([mine]) == 1
    assert admin.held == [_client_binding(theirs), _client_binding(prefixed)]
