"""Check, before anything is written, that a cluster's ACLs allow what a run or a group sync will do.

Apache Kafka reports the operations a principal may perform on a topic or a group (KIP-430:
``include_authorized_operations`` of Metadata and DescribeGroups), and checks Create without
creating anything when CreateTopics is sent with ``validate_only``. A cluster without an
authorizer allows every operation. A broker that reports no operations (before Kafka 2.3) is
not checked here; its refusals still come out named by the call that fails (``acls.refusal``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from kafka_migration.kafka.acls import AUTHORIZATION_FAILURES, Permission, allows, operation_names, refusal
from kafka_migration.model.text import plural, some

if TYPE_CHECKING:
    from kafka_migration.kafka.clients import KafkaCluster

# What a run does with each side's topics (Describe is implied by Read and Write).
SOURCE_TOPICS = (("Read", "to copy and verify them"), ("DescribeConfigs", "to copy their configs"))
TARGET_TOPICS = (
    ("Write", "to copy into them"),
    ("Read", "to verify the copy and resume it"),
    ("DescribeConfigs", "to check them against the source topics"),
)
# Right after the run created its target topics, before copying: what the copy and verification need.
CREATED_TOPICS = TARGET_TOPICS[:2]
CREATE_PURPOSE = "to create the missing target topics; Create on the cluster allows it too"


def topic_operations(cluster: KafkaCluster, names: Iterable[str]) -> dict[str, frozenset[str] | None]:
    """The operations the principal may perform on each topic (empty: not even Describe; None: not reported)."""
    from confluent_kafka import KafkaException

    found: dict[str, frozenset[str] | None] = {}
    for name, description in cluster.describe_topics(sorted(set(names)), with_operations=True).items():
        if not isinstance(description, KafkaException):
            found[name] = operation_names(description.authorized_operations)
        elif description.args and description.args[0].name() in AUTHORIZATION_FAILURES:
            found[name] = frozenset()
        # any other error (deleted meanwhile, no answer) is the planner's to report
    return found


def group_operations(cluster: KafkaCluster, group_ids: Iterable[str]) -> dict[str, frozenset[str] | None]:
    """The operations the principal may perform on each consumer group (a group not known there included)."""
    from confluent_kafka import KafkaException

    wanted = sorted(set(group_ids))
    if not wanted:
        return {}
    futures = cluster.admin.describe_consumer_groups(
        wanted, include_authorized_operations=True, request_timeout=cluster.timeout
    )
    found: dict[str, frozenset[str] | None] = {}
    for group_id, future in futures.items():
        try:
            found[group_id] = operation_names(future.result(timeout=cluster.timeout + 5).authorized_operations)
        except KafkaException as exc:
            if exc.args[0].name() in AUTHORIZATION_FAILURES:
                found[group_id] = frozenset()
    return found


def cluster_operations(cluster: KafkaCluster) -> frozenset[str] | None:
    """The operations the principal may perform on the Cluster resource (None: not reported or not answered).
    A cluster without an authorizer reports every operation."""
    from confluent_kafka import KafkaException

    try:
        future = cluster.admin.describe_cluster(include_authorized_operations=True, request_timeout=cluster.timeout)
        return operation_names(future.result(timeout=cluster.timeout + 5).authorized_operations)
    except (KafkaException, TimeoutError):
        return None


def granted_on_cluster(cluster: KafkaCluster) -> frozenset[str] | None:
    """The principal's operations on the Cluster resource, none reported read as none granted (an access sync's
    check, ``access/permissions.py``: every broker it can work with reports them); None when the cluster did not
    answer."""
    from confluent_kafka import KafkaException

    future: Any = cluster.admin.describe_cluster(include_authorized_operations=True, request_timeout=cluster.timeout)
    try:
        described = future.result(timeout=cluster.timeout + 5)
    except (KafkaException, TimeoutError):
        return None
    return operation_names(described.authorized_operations) or frozenset()


def refused_creation(cluster: KafkaCluster, names: Iterable[str]) -> list[str]:
    """The topics the principal may not create (CreateTopics with validate_only: nothing is created)."""
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import NewTopic

    wanted = sorted(set(names))
    refused = []
    for i in range(0, len(wanted), cluster.CREATE_BATCH):
        futures = cluster.admin.create_topics(
            [NewTopic(name) for name in wanted[i : i + cluster.CREATE_BATCH]],  # the brokers' defaults
            validate_only=True,
            request_timeout=cluster.timeout,
            operation_timeout=cluster.timeout,
        )
        for name, future in futures.items():
            try:
                future.result(timeout=cluster.timeout + 5)
            except KafkaException as exc:
                if exc.args[0].name() in AUTHORIZATION_FAILURES:
                    refused.append(name)
    return sorted(refused)


def missing(
    operations: Mapping[str, frozenset[str] | None], needed: Sequence[tuple[str, str]], resource: str
) -> list[Permission]:
    """Per needed operation, the resources whose reported operations do not allow it."""
    out = []
    for operation, purpose in needed:
        lacking = tuple(
            name
            for name, granted in sorted(operations.items())
            if granted is not None and not allows(granted, operation)
        )
        if lacking:
            out.append(Permission(operation, resource, lacking, purpose))
    return out


def check_run_permissions(
    source: KafkaCluster, target: KafkaCluster, names: Mapping[str, str], existing_targets: Iterable[str]
) -> None:
    """Refuse a run (source topic -> target topic ``names``) whose principals lack an ACL it needs."""
    source_missing = missing(topic_operations(source, list(names)), SOURCE_TOPICS, "topic")
    if source_missing:
        raise refusal("source", source.config.settings, source_missing)
    present = set(existing_targets)
    targets = sorted(set(names.values()))
    target_missing = missing(topic_operations(target, [n for n in targets if n in present]), TARGET_TOPICS, "topic")
    creating = [n for n in targets if n not in present]
    # Create on the Cluster allows every topic: then thousands of topics need no validate_only requests.
    granted = cluster_operations(target) if creating else None
    refused = [] if granted is not None and allows(granted, "Create") else refused_creation(target, creating)
    if refused:
        target_missing.insert(0, Permission("Create", "topic", tuple(refused), CREATE_PURPOSE))
    if target_missing:
        raise refusal("target", target.config.settings, target_missing)


def check_created_topics(
    target: KafkaCluster,
    created: Sequence[str],
    known: Mapping[str, frozenset[str] | None] | None = None,
    started: int = 0,
) -> None:
    """After creating target topics, before copying them: the copy's and verification's operations on them
    (``known``: as the wait for their leaders described them, else asked here). ``started``: how many topics
    before these were released to the copy already (their copy stops with the run)."""
    operations = (
        {name: known[name] for name in created}
        if known is not None and all(name in known for name in created)
        else topic_operations(target, created)
    )
    lacking = missing(operations, CREATED_TOPICS, "topic")
    if lacking:
        raise refusal(
            "target",
            target.config.settings,
            lacking,
            outcome=f"The target topic(s) {some(sorted(created), most=10)} were created, empty; nothing was copied "
            "to them"
            + (
                f" (the copy of the {plural(started, 'topic')} before them had started, and stopped with the run)"
                if started
                else ""
            )
            + ". The next run uses them, and resumes what stopped, once the ACLs are added.",
        )


def check_group_permissions(target: KafkaCluster, group_ids: Sequence[str], purpose: str) -> None:
    """Writing translated offsets is an offset commit: Read on the group (on the target topics too, which the
    run's Read already grants)."""
    lacking = missing(group_operations(target, group_ids), (("Read", purpose),), "group")
    if lacking:
        raise refusal("target", target.config.settings, lacking)
