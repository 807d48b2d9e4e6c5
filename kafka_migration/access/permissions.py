"""Check, before an access sync reads or writes anything, that each cluster lets its principal do what the sync
will: read the source's ACL bindings, SCRAM users and client quotas; read and write the target's.

The Cluster resource answers them all (KIP-430: DescribeCluster reports the principal's authorized operations on
it): DescribeAcls and DescribeUserScramCredentials need Describe on the cluster, CreateAcls, DeleteAcls and
AlterUserScramCredentials Alter, DescribeClientQuotas DescribeConfigs, AlterClientQuotas AlterConfigs. A refusal
names the cluster, the principal, each missing operation and the ``kafka-acls`` command that grants it, as the
copy's own check does (``kafka/permissions.py``).

A broker answers the operations only to a principal that may Describe the cluster; to any other it answers none,
which the client reads as "not reported". Every broker an access sync can work with reports them (KIP-430 is
Kafka 2.3, DescribeUserScramCredentials 2.7), so here no operations reported means none granted. A cluster that
does not answer at all is left to the sync's first request, which names it unreachable.
"""

from __future__ import annotations

from kafka_migration.kafka.acls import ACCESS_SYNC_READS, ACCESS_SYNC_WRITES, Permission, allows, refusal
from kafka_migration.kafka.clients import KafkaCluster
from kafka_migration.kafka.permissions import granted_on_cluster


def needed(role: str, dry_run: bool) -> tuple[Permission, ...]:
    """What a sync needs on the ``source`` or ``target`` cluster (a dry run writes nothing), as ``kafka/acls.py``
    declares it for this check and for the refusals of the calls themselves."""
    return ACCESS_SYNC_READS + (ACCESS_SYNC_WRITES if role == "target" and not dry_run else ())


def lacking(granted: frozenset[str] | None, needs: tuple[Permission, ...]) -> list[Permission]:
    """The needed permissions the granted operations do not allow (None: the cluster did not answer, unchecked)."""
    if granted is None:
        return []
    return [p for p in needs if not allows(granted, p.operation)]


def check_access_permissions(source: KafkaCluster, target: KafkaCluster, dry_run: bool = False) -> None:
    """Refuse (AuthorizationError, exit 2) a sync whose principal lacks an operation it needs on either
    cluster, source first; nothing has been read or written yet."""
    outcome = "Nothing was read or written."
    for cluster in (source, target):
        role = cluster.config.role
        missing = lacking(granted_on_cluster(cluster), needed(role, dry_run))
        if missing:
            raise refusal(role, cluster.config.settings, missing, outcome=outcome)
