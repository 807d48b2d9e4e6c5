"""Ledger tables. Changed only through Alembic migrations (``ledger/migrations``)."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import (
    JSON,
    BigInteger,
    Column,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator


class UtcDateTime(TypeDecorator[datetime]):
    """A time as the ledger keeps it: written and read as timezone-aware UTC, on every database.

    The column is ``DateTime(timezone=True)`` (TIMESTAMP WITH TIME ZONE on PostgreSQL). SQLite has no time zones:
    it stores the wall time and hands back a naive datetime, and PostgreSQL hands back the session's time zone.
    Every reader of the ledger gets UTC with its offset, so none needs to know which database it came from.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        return None if value is None else _as_utc(value)

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        return None if value is None else _as_utc(value)


def _as_utc(value: datetime) -> datetime:
    """``value`` in UTC; a naive one is UTC already (SQLite's, and what the ledger always wrote)."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


metadata = MetaData()

runs = Table(
    "km_runs",
    metadata,
    Column("run_id", String(250), primary_key=True),
    Column("trigger", String(40), nullable=False),  # "cli" or "airflow"
    Column("dag_id", String(250)),
    Column("dag_run_id", String(250)),
    Column("params", JSON, nullable=False),
    Column("source_cluster_id", String(250), nullable=False),
    Column("source_bootstrap", Text, nullable=False),
    Column("target_cluster_id", String(250), nullable=False),
    Column("target_bootstrap", Text, nullable=False),
    Column("started_at", UtcDateTime(), nullable=False),
    Column("ended_at", UtcDateTime()),
    Column("status", String(20), nullable=False),
    Column("topics", Integer, nullable=False, default=0),
    Column("records", BigInteger, nullable=False, default=0),
    Column("warnings", JSON, nullable=False, default=list),
    Column("report_sha256", String(80)),
    Column("message", Text),
    Column("plan", JSON),  # 0002
    # 0006: where the wall time went (kafka_migration.model.timings.RunTimings.to_dict); null for older runs
    Column("timings", JSON),
)

segments = Table(
    "km_segments",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("run_id", String(250), ForeignKey("km_runs.run_id", ondelete="CASCADE"), nullable=False),
    Column("source_cluster_id", String(250), nullable=False),
    Column("source_topic", String(250), nullable=False),
    Column("partition", Integer, nullable=False),
    Column("target_cluster_id", String(250), nullable=False),
    Column("target_topic", String(250), nullable=False),
    Column("source_start", BigInteger, nullable=False),
    Column("source_end", BigInteger, nullable=False),
    Column("target_start", BigInteger, nullable=False),
    Column("target_end", BigInteger),
    Column("expired_offsets", BigInteger, nullable=False, default=0),
    Column("copied_records", BigInteger),
    Column("resumed_records", BigInteger),
    Column("source_records", BigInteger),
    Column("target_records", BigInteger),
    Column("source_checksum", String(80)),
    Column("target_checksum", String(80)),
    Column("status", String(20), nullable=False),  # planned, copied, verified, mismatch, failed
    Column("first_difference", Text),
    Column("first_source_offset", BigInteger),
    Column("first_target_offset", BigInteger),
    Column("copy_seconds", Float),
    Column("verify_seconds", Float),
    Column("error", Text),
    Column("copied_bytes", BigInteger),  # 0002
    # 0006: how many topics shared this topic's Spark job (1: its own job; null: not recorded)
    Column("job_topics", Integer),
    # 0012: --schema-ids translate: the keys and values the verification found translated, unchanged or without a
    # header (``model.schemas.SchemaCounts.to_dict``); null where the partition was compared byte for byte
    Column("schema_counts", JSON),
    UniqueConstraint("run_id", "source_topic", "partition", name="uq_km_segments_run_partition"),
    Index("ix_km_segments_key", "source_cluster_id", "source_topic", "partition", "target_cluster_id", "target_topic"),
)

checkpoints = Table(
    "km_checkpoints",
    metadata,
    Column("source_cluster_id", String(250), primary_key=True),
    Column("source_topic", String(250), primary_key=True),
    Column("partition", Integer, primary_key=True),
    Column("target_cluster_id", String(250), primary_key=True),
    Column("target_topic", String(250), primary_key=True),
    Column("source_offset", BigInteger, nullable=False),  # verified up to here (exclusive)
    Column("target_offset", BigInteger, nullable=False),  # where the next copied record lands
    Column("run_id", String(250), nullable=False),
    Column("updated_at", UtcDateTime(), nullable=False),
)

offset_map = Table(
    "km_offset_map",
    metadata,
    Column("segment_id", Integer, ForeignKey("km_segments.id", ondelete="CASCADE"), primary_key=True),
    Column("source_offset", BigInteger, primary_key=True),
    Column("target_offset", BigInteger, nullable=False),
)

group_syncs = Table(  # 0003_group_syncs: one row per consumer group partition a group sync looked at
    "km_group_syncs",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("sync_id", String(250), nullable=False),  # one `groups sync` invocation or DAG task
    Column("run_id", String(250)),  # the migration run the sync was part of (DAG run, cutover), else null
    Column("synced_at", UtcDateTime(), nullable=False),
    Column("source_cluster_id", String(250), nullable=False),
    Column("target_cluster_id", String(250), nullable=False),
    Column("group_id", String(255), nullable=False),
    Column("source_topic", String(250), nullable=False),
    Column("partition", Integer, nullable=False),
    Column("source_offset", BigInteger, nullable=False),  # the group's committed offset on the source
    Column("source_end", BigInteger),  # the source partition's end at sync time (lag = end - offset)
    Column("target_topic", String(250)),
    Column("target_offset", BigInteger),  # translated; null when not translatable
    Column("previous_target_offset", BigInteger),  # the target group's offset before the sync
    Column("translation", String(20)),  # within, end, before, gap, beyond (kafka_migration.model.offsets)
    Column("translated_by", String(250)),  # run id of the verified segment used
    Column("outcome", String(30), nullable=False),
    Column("proof", String(30)),
    Column("reason", Text),
    Index("ix_km_group_syncs_sync", "sync_id"),
    Index("ix_km_group_syncs_run", "run_id"),
    Index("ix_km_group_syncs_group", "source_cluster_id", "target_cluster_id", "group_id"),
)

# 0005_cutovers: one row per cutover attempt, and the failback that may follow it.
cutovers = Table(
    "km_cutovers",
    metadata,
    Column("cutover_id", String(250), primary_key=True),
    Column("trigger", String(40), nullable=False),  # "cli" or "airflow"
    Column("dag_id", String(250)),
    Column("dag_run_id", String(250)),
    Column("params", JSON, nullable=False),  # topic and group selection, quiet_seconds
    Column("source_cluster_id", String(250), nullable=False),
    Column("source_bootstrap", Text, nullable=False),
    Column("target_cluster_id", String(250), nullable=False),
    Column("target_bootstrap", Text, nullable=False),
    Column("run_id", String(250)),  # the final incremental run
    # [{source_topic, target_topic, partitions: [{partition, source_end, target_end}]}]: where failback starts
    Column("topics", JSON, nullable=False, default=list),
    Column("groups", JSON, nullable=False, default=list),  # group ids moved to the target
    Column("started_at", UtcDateTime(), nullable=False),
    Column("ended_at", UtcDateTime()),
    Column("status", String(20), nullable=False),  # checking, refused, running, completed, failed
    Column("message", Text),
    Column("report_sha256", String(80)),
    Column("failback_run_id", String(250)),
    Column("failback_status", String(20)),  # running, completed, failed
    Column("failback_started_at", UtcDateTime()),
    Column("failback_ended_at", UtcDateTime()),
    Column("failback_message", Text),
    Index("ix_km_cutovers_clusters", "source_cluster_id", "target_cluster_id"),
)

# 0004: one writer per target topic. A run takes the lease of every target topic it plans to write before it
# reads checkpoints, renews it while it runs, and releases it at the end; a lease not renewed by expires_at may
# be taken over. Keyed by the target topic (not the source partition): that is what must have one writer, a
# plan always covers every partition of a topic, and two sources aimed at one target topic conflict too.
leases = Table(
    "km_leases",
    metadata,
    Column("target_cluster_id", String(250), primary_key=True),
    Column("target_topic", String(250), primary_key=True),
    Column("source_cluster_id", String(250), nullable=False),
    Column("source_topic", String(250), nullable=False),
    Column("run_id", String(250), nullable=False),
    Column("trigger", String(40), nullable=False),  # "cli" or "airflow"
    Column("holder", Text, nullable=False),  # host and process, or DAG and DAG run
    Column("acquired_at", UtcDateTime(), nullable=False),
    Column("renewed_at", UtcDateTime(), nullable=False),
    Column("expires_at", UtcDateTime(), nullable=False),
    Column("taken_over_from", String(250)),  # the run whose expired lease this one took over
    Index("ix_km_leases_run", "run_id"),
)

# 0004: the topic ids (Kafka's topic UUIDs) a checkpoint was verified against, so that a topic deleted and
# recreated under the same name is recognised even when it has grown past the checkpoint.
checkpoint_topic_ids = Table(
    "km_checkpoint_topic_ids",
    metadata,
    Column("source_cluster_id", String(250), primary_key=True),
    Column("source_topic", String(250), primary_key=True),
    Column("target_cluster_id", String(250), primary_key=True),
    Column("target_topic", String(250), primary_key=True),
    Column("source_topic_id", String(64)),
    Column("target_topic_id", String(64)),
    Column("run_id", String(250), nullable=False),
    # `kafka-migrate checkpoints forget`: segments up to this id no longer count as interrupted copies to resume
    Column("forgotten_through_segment", Integer),
)

# 0007: verified records a target lost (its log start passed them while the source still holds them), one row
# per partition and run that found it. ``accepted``: the operator accepted the loss (--accept-target-loss), so
# later runs count target offsets below ``target_end`` of that partition as gone, not as a new loss.
target_losses = Table(
    "km_target_losses",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("run_id", String(250), ForeignKey("km_runs.run_id", ondelete="CASCADE"), nullable=False),
    Column("source_cluster_id", String(250), nullable=False),
    Column("source_topic", String(250), nullable=False),
    Column("partition", Integer, nullable=False),
    Column("target_cluster_id", String(250), nullable=False),
    Column("target_topic", String(250), nullable=False),
    Column("source_start", BigInteger, nullable=False),
    Column("source_end", BigInteger, nullable=False),
    Column("target_start", BigInteger, nullable=False),
    Column("target_end", BigInteger, nullable=False),
    Column("verified_by", String(250), nullable=False),
    Column("accepted", Integer, nullable=False, default=0),
    Column("found_at", UtcDateTime(), nullable=False),
    Index("ix_km_target_losses_clusters", "source_cluster_id", "target_cluster_id"),
)

# 0008_access_syncs: one row per ACL binding an access sync looked at, and what it did with it.
access_syncs = Table(
    "km_access_syncs",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("sync_id", String(250), nullable=False),  # one `access sync` invocation or DAG task
    Column("run_id", String(250)),  # the migration run it was part of, else null
    Column("synced_at", UtcDateTime(), nullable=False),
    Column("source_cluster_id", String(250), nullable=False),
    Column("target_cluster_id", String(250), nullable=False),
    Column("dry_run", Integer, nullable=False, default=0),
    # the binding as the target holds it (or would): Kafka's names
    Column("resource_type", String(30), nullable=False),
    Column("resource_name", String(255), nullable=False),
    Column("pattern_type", String(20), nullable=False),
    Column("principal", String(255), nullable=False),
    Column("host", String(255), nullable=False),
    Column("operation", String(30), nullable=False),
    Column("permission", String(10), nullable=False),
    Column("action", String(20), nullable=False),  # added, present, refused, conflict, removed
    Column("reason", Text),
    Index("ix_km_access_syncs_sync", "sync_id"),
    Index("ix_km_access_syncs_clusters", "source_cluster_id", "target_cluster_id"),
)

# 0008_access_syncs: the SCRAM credentials an access sync looked at (never a secret: user, mechanism, iterations).
access_users = Table(
    "km_access_users",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("sync_id", String(250), nullable=False),
    Column("user", String(255), nullable=False),
    Column("mechanism", String(20), nullable=False),
    Column("iterations", Integer, nullable=False),
    Column("action", String(20), nullable=False),  # added, present, needs_password (would_add in a dry run)
    Column("login", String(20)),  # proven, failed, not_provable; null when not tried
    Column("reason", Text),
    Index("ix_km_access_users_sync", "sync_id"),
)

# 0009_access_quotas: the client quotas an access sync looked at, and what it did with each.
access_quotas = Table(
    "km_access_quotas",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("sync_id", String(250), nullable=False),
    Column("run_id", String(250)),
    Column("synced_at", UtcDateTime(), nullable=False),
    Column("source_cluster_id", String(250), nullable=False),
    Column("target_cluster_id", String(250), nullable=False),
    Column("dry_run", Integer, nullable=False, default=0),
    Column("entity", Text, nullable=False),  # JSON: [[type, name or null for the default], ...]
    Column("quota_key", String(100), nullable=False),
    Column("value", Float, nullable=False),  # the source's (carried); a target_only row: the target's
    Column("target_value", Float),  # the target's before the sync; null: none
    Column("action", String(20), nullable=False),  # added, present, updated, different, target_only, removed
    Column("reason", Text),
    Index("ix_km_access_quotas_sync", "sync_id"),
    Index("ix_km_access_quotas_clusters", "source_cluster_id", "target_cluster_id"),
)

# 0010_access_probes: what each cluster answered an access sync's live probes (a user trying an operation as its
# bindings allow or deny it); outcomes and names only, never a secret.
access_probes = Table(
    "km_access_probes",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("sync_id", String(250), nullable=False),
    Column("user", String(255), nullable=False),  # as it logged in to the source
    Column("target_user", String(255), nullable=False),  # as it logged in to the target (the principal map)
    Column("probe", String(20), nullable=False),  # produce, consume, commit, describe, transaction
    Column("resource", String(255), nullable=False),  # the topic, group or transactional id on the source
    Column("target_resource", String(255), nullable=False),  # the same on the target (the rename)
    Column("topic", String(255)),  # a commit's topic on the source
    Column("source_outcome", Text, nullable=False),  # allowed, denied (ERROR) or inconclusive: why
    Column("target_outcome", Text, nullable=False),
    Column("matched", Integer, nullable=False),
    Index("ix_km_access_probes_sync", "sync_id"),
)

# 0011_access_checks: one row per access sync: its verdict, the decision check's result, its report's digest.
access_checks = Table(
    "km_access_checks",
    metadata,
    Column("sync_id", String(250), primary_key=True),
    Column("run_id", String(250)),
    Column("synced_at", UtcDateTime(), nullable=False),
    Column("source_cluster_id", String(250), nullable=False),
    Column("target_cluster_id", String(250), nullable=False),
    Column("source_bootstrap", Text, nullable=False),
    Column("target_bootstrap", Text, nullable=False),
    Column("dry_run", Integer, nullable=False, default=0),
    Column("verdict", String(20), nullable=False),  # proven or different
    Column("actions_checked", Integer, nullable=False),
    Column("differences", JSON, nullable=False),  # descriptions of the actions decided differently
    Column("unreadable_source", Integer, nullable=False, default=0),
    Column("unreadable_target", Integer, nullable=False, default=0),
    Column("report_sha256", String(80)),
    Index("ix_km_access_checks_time", "synced_at"),
)

# 0012_schema_ids: the subject versions a run needed on the target registry (--schema-ids keep or translate), in
# the order it registered them (``position``), each source id with its target id and the fingerprint both name.
schema_ids = Table(
    "km_schema_ids",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("run_id", String(250), ForeignKey("km_runs.run_id", ondelete="CASCADE"), nullable=False),
    Column("mode", String(20), nullable=False),  # keep or translate
    Column("source_registry", Text, nullable=False),  # display URLs: never a password
    Column("target_registry", Text, nullable=False),
    Column("source_subject", String(255), nullable=False),
    Column("target_subject", String(255), nullable=False),
    Column("version", Integer, nullable=False),
    Column("target_version", Integer),
    Column("format", String(20), nullable=False),
    Column("source_id", BigInteger, nullable=False),
    Column("target_id", BigInteger),
    Column("action", String(20), nullable=False),  # present, registered
    Column("fingerprint", String(80)),
    Column("position", Integer, nullable=False),
    Index("ix_km_schema_ids_run", "run_id"),
)


def utc_now() -> datetime:
    """The time the ledger records: timezone-aware UTC, as its UtcDateTime() columns hold."""
    return datetime.now(UTC)
