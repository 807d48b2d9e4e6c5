"""Make the plan: discover the source, map names, check targets. Writes nothing to the clusters.

The only write is the ``claim`` of the run's target topics in the ledger (leases), made before
the ledger's checkpoints are read, so that the plan starts where the last writer stopped.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, replace
from datetime import UTC, datetime

from kafka_migration.exceptions import (
    ConfigurationError,
    NoTopicsMatchedError,
    SourceGapError,
    StaleStateError,
    TopicConflictError,
)
from kafka_migration.kafka.acls import unlisted_topics_hint
from kafka_migration.kafka.clients import KafkaCluster
from kafka_migration.kafka.permissions import check_run_permissions
from kafka_migration.ledger import Ledger
from kafka_migration.model.bulk import collector_paused
from kafka_migration.model.checkpoints import Checkpoint, Key, PendingSegment, RecordedPositions
from kafka_migration.model.config import MigrationOptions, parse_start
from kafka_migration.model.naming import name_collisions, same_cluster_exclude_hint, target_names, target_topic_name
from kafka_migration.model.plan import MigrationPlan, TopicPlan, group_into_jobs
from kafka_migration.model.state import TopicPair, TopicState
from kafka_migration.model.text import plural
from kafka_migration.run.direction import Failback
from kafka_migration.run.discovery import select_topics
from kafka_migration.run.files import new_run_id
from kafka_migration.run.positions import partition_positions
from kafka_migration.run.retention import shortfalls
from kafka_migration.run.stale_state import stale_state_problems
from kafka_migration.run.target_checks import PlanningReads, drop_aged, find_losses
from kafka_migration.run.topic_configs import DEFAULT_SOURCES, target_defaults
from kafka_migration.run.topics import plan_topic

log = logging.getLogger(__name__)


def safe_run_id(raw: str) -> str:
    """A run id usable as a directory name (Airflow run ids contain ':' and '+')."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", raw).strip("_") or new_run_id()


def _refuse_name_clashes(
    names: dict[str, str], selected: set[str], existing: set[str], same_cluster: bool, template: str
) -> None:
    """Refuse, before any topic is created, target names that would fail or loop half-way through a run."""
    if same_cluster:
        loops = sorted((name, topic) for topic, name in names.items() if name in selected)
        if loops:
            shown = ", ".join(f"{name!r} (the copy of {topic!r})" for name, topic in loops[:5])
            raise ConfigurationError(
                f"Source and target are the same cluster and {plural(len(loops), 'topic')} would be both copied and "
                f"written to in this run: {shown}{' ...' if len(loops) > 5 else ''}. Exclude the copies, e.g. "
                f"exclude pattern {same_cluster_exclude_hint(template)!r}."
            )
    source_of = {name: topic for topic, name in names.items()}
    clashes = name_collisions([n for n in names.values() if n not in existing], existing)
    if clashes:
        shown = ", ".join(
            f"{new!r} (from {source_of[new]!r}) with {'existing' if other in existing else 'new'} {other!r}"
            for new, other in clashes[:5]
        )
        raise ConfigurationError(
            f"{plural(len(clashes), 'target topic name')} would collide on the target, where Kafka treats '.' and '_' "
            f"as the same character: {shown}{' ...' if len(clashes) > 5 else ''}. Exclude one topic of each pair "
            "or use another rename; nothing was created."
        )


# claim(source cluster id, target cluster id, [(source topic, target topic)]) -> warnings (lease takeovers)
Claim = Callable[[str, str, Sequence[tuple[str, str]]], list[str]]


@collector_paused()
def _offsets_at_start(
    source: KafkaCluster,
    states: Mapping[str, TopicState],
    names: Mapping[str, str],
    checkpoints: Mapping[Key, Checkpoint],
    pending: Mapping[Key, PendingSegment],
    first_start: str | int,
) -> dict[str, dict[int, int]]:
    """With ``--start`` a time: per topic and partition, the first offset at or after it (-1: none), asked in one
    batched lookup for the partitions that start there (those without a checkpoint or an interrupted run)."""
    if not isinstance(first_start, int):
        return {}
    wanted = {
        (topic, p): first_start
        for topic, state in states.items()
        if topic in names
        for p in range(state.partitions)
        if (topic, p, names[topic]) not in checkpoints and (topic, p, names[topic]) not in pending
    }
    found: dict[str, dict[int, int]] = {}
    for (topic, p), offset in source.offsets_for_times(wanted).items():
        found.setdefault(topic, {})[p] = offset
    return found


def build_plan(
    source: KafkaCluster,
    target: KafkaCluster,
    options: MigrationOptions,
    run_id: str | None = None,
    ledger: Ledger | None = None,
    claim: Claim | None = None,
) -> MigrationPlan:
    """Discover, select, map and check every topic; raise before anything is written.

    With a ledger, each partition starts at its verified checkpoint (or where an
    interrupted run began), so runs are incremental and retries resume. ``claim``
    takes the leases of the target topics before checkpoints and offsets are read
    (raising when another run holds one); the caller releases them if planning fails.
    """
    run_id = run_id or new_run_id()
    source_info = source.describe()
    target_info = target.describe()
    for role, info in (("Source", source_info), ("Target", target_info)):
        log.info("%s cluster %s (%s, %s)", role, info.cluster_id, info.bootstrap, plural(info.broker_count, "broker"))

    # A broker that reports no cluster id (some Kafka-compatible services) cannot be told apart: not "same".
    same_cluster = source_info.cluster_id == target_info.cluster_id and source_info.cluster_id not in ("", "None")
    if same_cluster and target_topic_name(options.rename, "t") == "t":
        raise ConfigurationError(
            f"Source and target are the same cluster (id {source_info.cluster_id}) and the rename "
            f"{options.rename!r} keeps every name: each topic would be copied onto itself. Give a rename such as "
            "'copy.{topic}', or a target that is another cluster."
        )

    all_topics = source.topic_names()
    selection = select_topics(all_topics, options.include, options.exclude)
    if not selection.selected:
        shown = ", ".join(all_topics[:20]) + (f" ... ({len(all_topics)} in all)" if len(all_topics) > 20 else "")
        raise NoTopicsMatchedError(
            f"No topic on the source cluster {source_info.bootstrap} matches include {options.include!r}"
            + (f" and not exclude {options.exclude!r}" if options.exclude else "")
            + f". Topics there: {shown or 'none'}"
            + (f"; skipped: {', '.join(sorted(selection.skipped))}" if selection.skipped else "")
            + ". Nothing was written; check the patterns (they must match the whole topic name)."
            + (" " + unlisted_topics_hint(source.config.settings)).rstrip()
        )
    names = target_names(options.rename, selection.selected, options.topic_map)
    existing_targets = set(target.topic_names())
    _refuse_name_clashes(names, set(selection.selected), existing_targets, same_cluster, options.rename)
    problems: list[str] = []
    warnings: list[str] = []
    # The source topics are read on a second thread while the ACLs are checked and the leases taken: only the
    # target's topics must be read under the leases. A refusal of the check wins over the read's own error.
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="source-states") as pool:
        source_read = pool.submit(source.topic_states, selection.selected)
        check_run_permissions(source, target, names, existing_targets)
        if source_info.cluster_id == target_info.cluster_id:
            for topic, name in names.items():
                if topic == name:
                    problems.append(
                        f"source and target are the same cluster ({source_info.cluster_id}) and topic {topic!r} "
                        "would be copied onto itself; use --rename, e.g. 'copy.{topic}'."
                    )
        if claim is not None and not problems:
            warnings.extend(claim(source_info.cluster_id, target_info.cluster_id, sorted(names.items())))
        source_states = source_read.result()
    target_states = target.topic_states(names.values())
    # What a new target topic gets anyway is not set on the topics this run creates (None: not readable, so set).
    creates = any(names[topic] not in target_states for topic in selection.selected)
    defaults = target_defaults(target.broker_configs(DEFAULT_SOURCES)) if creates else {}
    checkpoints = ledger.checkpoints(source_info.cluster_id, target_info.cluster_id) if ledger else {}
    pending = ledger.pending_segments(source_info.cluster_id, target_info.cluster_id, checkpoints) if ledger else {}
    recorded_ids = ledger.topic_ids(source_info.cluster_id, target_info.cluster_id) if ledger else {}
    first_start = parse_start(options.start)
    failback = (
        Failback(options.failback_of, source_info.bootstrap, target_info.bootstrap) if options.failback_of else None
    )
    starts_at_time = _offsets_at_start(source, source_states, names, checkpoints, pending, first_start)
    skipped = dict(selection.skipped)
    stale: list[str] = []
    gaps: list[str] = []
    topics: list[TopicPlan] = []
    for topic in selection.selected:
        state = source_states.get(topic)
        if state is None:
            skipped[topic] = "disappeared from the source during planning"
            continue
        existing = target_states.get(names[topic])
        pair = TopicPair(state, names[topic], existing)
        recorded = RecordedPositions(checkpoints, pending)
        ids = recorded_ids.get((topic, names[topic]))
        stale.extend(
            stale_state_problems(pair, recorded, ids, (source_info.cluster_id, target_info.cluster_id), failback)
        )
        at_time = starts_at_time.get(topic) if isinstance(first_start, int) else None
        positions, position_problems, position_warnings = partition_positions(
            pair, recorded, first_start, at_time, options.allow_gaps, failback
        )
        gaps.extend(position_problems)
        warnings.extend(position_warnings)
        topic_plan, topic_problems = plan_topic(
            state,
            names[topic],
            target_states.get(names[topic]),
            target_info,
            options.replication_factor,
            positions,
            failback,
            defaults,
            options.accept_target_retention,
            ledger.label if ledger is not None else None,
        )
        problems.extend(topic_problems)
        topics.append(
            replace(
                topic_plan,
                source_topic_id=state.topic_id,
                target_topic_id=existing.topic_id if existing is not None else None,
            )
        )
    if stale:
        raise StaleStateError(stale + gaps + problems)
    # A run never verifies records the target is about to delete; one that keeps less is refused with the records
    # at risk, unless accepted.
    refused = {
        t.source_topic
        for t in topics
        if not options.accept_target_retention
        and t.target_topic in target_states
        and shortfalls(source_states[t.source_topic], target_states[t.target_topic])
    }
    topics, aged_warnings, at_risk = drop_aged(source, topics, source_states, target_states, refused)
    warnings.extend(aged_warnings)
    problems.extend(at_risk)
    losses, loss_lines = find_losses(
        source,
        ledger,
        (source_info, target_info),
        PlanningReads([(t.source_topic, t.target_topic) for t in topics], source_states, target_states, checkpoints),
        options.accept_target_loss,
        options.accept_target_retention,
    )
    warnings.extend(loss_lines)
    if problems:
        raise TopicConflictError(problems + gaps + loss_lines)
    if gaps:
        raise SourceGapError(gaps + loss_lines)
    rf = options.replication_factor
    if rf is not None and rf > target_info.broker_count and any(t.create for t in topics):
        raise ConfigurationError(
            f"The target replication factor {rf} exceeds the {plural(target_info.broker_count, 'broker')} of the "
            f"target cluster {target_info.cluster_id}, so its topics could not be created; give at most "
            f"{target_info.broker_count}, or leave it out for min(source replication factor, target brokers)."
        )
    disappeared: dict[str, str] = {}
    if ledger is not None:
        known = {topic: target for topic, _, target in checkpoints}  # topics copied before
        in_scope = select_topics(known, options.include, options.exclude).selected
        disappeared = {t: known[t] for t in in_scope if t not in all_topics}
        warnings.extend(
            f"source topic {t} (copied to {name} before) no longer exists on the source"
            for t, name in disappeared.items()
        )
    return MigrationPlan(
        run_id=run_id,
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        source=source_info,
        target=target_info,
        options=asdict(options),
        topics=tuple(topics),
        skipped_topics=skipped,
        jobs=group_into_jobs(topics, options.topics_per_job),
        disappeared_topics=disappeared,
        warnings=tuple(warnings),
        target_losses=tuple(losses),
    )
