"""Consumer group offset sync end to end: read both clusters and the ledger, write the target, prove, record.

Used by ``kafka-migrate groups sync``, the DAGs' ``sync_groups`` task and the cutover. Every check
that can fail on bad input runs before the first write, so a ConfigurationError means nothing
was written.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from kafka_migration.exceptions import ConfigurationError, MigrationError, describe_failure
from kafka_migration.groups.rules import Routes, conclude, judge_proof, plan_group, select_groups
from kafka_migration.kafka.acls import unlisted_groups_hint
from kafka_migration.kafka.groups import GroupCluster, first_record
from kafka_migration.kafka.permissions import check_group_permissions
from kafka_migration.ledger import Ledger
from kafka_migration.ledger.urls import redact_url
from kafka_migration.lineage.emit import Lineage, now
from kafka_migration.model.checkpoints import Key
from kafka_migration.model.config import ClusterConfig, ClusterPair
from kafka_migration.model.groups import PENDING, UNREADABLE, WRITE, GroupSync, GroupSyncResult, PartitionSync
from kafka_migration.model.offsets import MappedSegment
from kafka_migration.model.text import plural, some

log = logging.getLogger(__name__)

# Proof reads run side by side; each opens two short-lived consumers.
PROOF_THREADS = 4


def new_sync_id(run_id: str | None = None) -> str:
    """``<run id>__groups`` inside a run (a retried task replaces its rows), else a fresh time-ordered id."""
    if run_id:
        return f"{run_id}__groups"
    return f"groups-{datetime.now(UTC).strftime('%Y%m%dT%H%M%SZ')}-{uuid.uuid4().hex[:6]}"


@dataclass(frozen=True)
class GroupSyncOptions:
    """Which groups a sync moves and how: ids fully matching ``groups`` and not ``exclude_groups``; ``dry_run``
    writes and records nothing; ``allow_rewind`` may move a target offset back; the run it is part of and its
    sync id (default ``new_sync_id``); ``segments``: the verified segments to translate through (default: the
    ledger's between the two clusters; a failback passes the forward ones read backwards)."""

    groups: str = ".*"
    exclude_groups: str | None = None
    dry_run: bool = False
    allow_rewind: bool = False
    run_id: str | None = None
    sync_id: str | None = None
    segments: Mapping[Key, list[MappedSegment]] | None = None


def sync_groups(
    source: ClusterConfig,
    target: ClusterConfig,
    ledger: Ledger,
    options: GroupSyncOptions | None = None,
    lineage: Lineage | None = None,
) -> GroupSyncResult:
    """Translate the committed offsets of the selected source groups to the target, write, prove and record them.

    Contract (the options: ``GroupSyncOptions``):
      * Selects source consumer groups whose id fully matches ``groups`` and not ``exclude_groups`` and that
        have committed offsets on topics the ledger holds verified copies of between these two clusters (by
        cluster id; renamed topics follow the ledger). Offsets on other topics are ignored (listed per group).
      * Raises ConfigurationError, before anything is written, for a bad pattern, an unreachable cluster,
        a ledger without verified runs between these clusters, no matching group, or matching groups
        without offsets on migrated topics.
      * Writes (AlterConsumerGroupOffsets, committed metadata kept) only to groups that are not active on
        the target, never moves a target offset back unless ``allow_rewind``, then proves every translated
        partition: the first record at/after the source offset and at/after the target offset, within the
        verified ranges, have the same canonical encoding, or both ranges end there.
      * Records every partition in the ledger (km_group_syncs) under ``sync_id`` (default ``new_sync_id``),
        linked to ``run_id`` when the sync is part of a migration run; a dry run writes and records nothing.
      * Sends its lineage (START, COMPLETE or FAIL) to ``lineage``; None: openlineage-python's standard
        configuration, as the CLI has it.
      * Returns the frozen result; ``result.exit_code`` is 0 when every partition is synced or unchanged and
        proven, 1 otherwise (``result.failures()`` names them). Other failures raise MigrationError (exit 3).
    """
    options = options or GroupSyncOptions()
    groups, exclude_groups, dry_run = options.groups, options.exclude_groups, options.dry_run
    allow_rewind, run_id, segments = options.allow_rewind, options.run_id, options.segments
    select_groups((), groups, exclude_groups)  # bad patterns fail first, before any connection
    started = now()
    source_cluster = GroupCluster(source)
    target_cluster = GroupCluster(target)
    source_info = source_cluster.describe()
    target_info = target_cluster.describe()
    if segments is None:  # a failback passes the forward segments read backwards too (cutover.combine_segments)
        segments = ledger.verified_segments(source_info.cluster_id, target_info.cluster_id)
    if not segments:
        raise ConfigurationError(
            f"The ledger at {redact_url(str(ledger.engine.url))} holds no verified migration from cluster "
            f"{source_info.cluster_id} ({source.bootstrap}) to cluster {target_info.cluster_id} ({target.bootstrap}); "
            "run kafka-migrate run (or the kafka_migration DAG) between them first, or point --ledger at the "
            "ledger that recorded it."
        )
    routes = Routes.from_keys(segments)
    listed = source_cluster.group_ids()
    selected = select_groups(listed, groups, exclude_groups)
    if not selected:
        raise ConfigurationError(
            f"No consumer group on the source cluster matches --group {groups!r}"
            + (f" and not --exclude-group {exclude_groups!r}" if exclude_groups else "")
            + f" ({plural(len(listed), 'group')} there"
            + (f", e.g. {', '.join(listed[:3])}" if listed else "")
            + "). Patterns must match the whole group id."
            + (" " + unlisted_groups_hint(source.settings)).rstrip()
        )
    source_groups = source_cluster.groups(selected, known=listed)
    relevant = [g for g in source_groups.values() if any(routes.migrated(t) for t, _p in g.offsets)]
    if not relevant:
        raise ConfigurationError(
            f"None of the {plural(len(selected), 'selected consumer group')} ({some(selected)}) has committed "
            f"offsets on a topic migrated from "
            f"{source_info.cluster_id} to {target_info.cluster_id}; nothing to sync. Check --group and the "
            "migration's topics."
        )
    if not dry_run:  # before reading the target's groups: Read there also allows Describe
        ids = [g.group_id for g in relevant]
        check_group_permissions(target_cluster, ids, "to write the translated offsets, an offset commit")
    target_listed = target_cluster.group_ids()
    target_groups = target_cluster.groups([g.group_id for g in relevant], known=target_listed)
    source_ends = source_cluster.end_offsets({(t, p) for g in relevant for (t, p) in g.offsets if routes.migrated(t)})
    planned = [plan_group(g, target_groups[g.group_id], routes, segments, source_ends, allow_rewind) for g in relevant]
    sync_id = options.sync_id or new_sync_id(run_id)
    done = [_write(target_cluster, g) if not dry_run else g for g in planned]
    done = _prove(source, target, done, dry_run)
    result = GroupSyncResult(
        sync_id=sync_id,
        run_id=run_id,
        source_cluster_id=source_info.cluster_id,
        target_cluster_id=target_info.cluster_id,
        dry_run=dry_run,
        allow_rewind=allow_rewind,
        groups=tuple(done),
    )
    if not dry_run:
        ledger.record_group_sync(result)
        lineage = lineage if lineage is not None else Lineage.from_environment()
        lineage.group_sync_done(result, source.bootstrap, target.bootstrap, started)  # the translated positions
    return result


def _write(target: GroupCluster, group: GroupSync) -> GroupSync:
    """Write one group's translated offsets; a refusal marks its written partitions as failed."""
    writes = group.writes()
    if not writes:
        return group
    try:
        target.alter_offsets(group.group_id, writes)
    except MigrationError as exc:
        message = describe_failure(exc)
        return replace(
            group,
            partitions=tuple(conclude(p, None, False, message) if p.action == WRITE else p for p in group.partitions),
        )
    log.info("group %s: wrote %s on the target", group.group_id, plural(len(writes), "offset"))
    return group


def _prove(source: ClusterConfig, target: ClusterConfig, groups: list[GroupSync], dry_run: bool) -> list[GroupSync]:
    """Read the next record on both sides of every translated partition and conclude each partition.

    Roles by position (``ClusterPair.of``): in a failback's sync the source is the cutover's target."""
    pair = ClusterPair.of(source, target)

    def prove(p: PartitionSync) -> PartitionSync:
        if not p.needs_proof or p.target_offset is None or p.target_topic is None:
            return p
        if p.outcome != PENDING:
            return p
        try:
            src = first_record(pair.source, p.source_topic, p.partition, p.proof_source_offset, p.source_limit)
            tgt = first_record(pair.target, p.target_topic, p.partition, p.target_offset, p.target_limit)
        except MigrationError as exc:
            log.warning("%s: proof could not read: %s", p.name(), describe_failure(exc))
            return conclude(p, UNREADABLE, dry_run)
        return conclude(p, judge_proof(src[1] if src else None, tgt[1] if tgt else None), dry_run)

    with ThreadPoolExecutor(max_workers=PROOF_THREADS) as pool:
        return [replace(g, partitions=tuple(pool.map(prove, g.partitions))) for g in groups]
