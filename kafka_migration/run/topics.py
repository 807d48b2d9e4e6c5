"""Target topics: names, the configs that travel, compatibility of existing topics."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from kafka_migration.kafka.clients import KafkaCluster
from kafka_migration.kafka.permissions import check_created_topics
from kafka_migration.model.plan import ClusterInfo, MigrationPlan, PartitionPlan, TopicPlan
from kafka_migration.model.state import TopicDescription, TopicState
from kafka_migration.model.text import offset_range, plural
from kafka_migration.run.direction import Failback
from kafka_migration.run.positions import Position
from kafka_migration.run.retention import shortfalls
from kafka_migration.run.topic_configs import (
    EXCLUDED_CONFIGS,
    cleanup_policy,
    config_drift,
    decide_configs,
    max_message_bytes,
    split_configs,
)

__all__ = [
    "EXCLUDED_CONFIGS",
    "CreatedTopics",
    "compatibility_problems",
    "create_target_topics",
    "plan_topic",
    "split_configs",
]

log = logging.getLogger(__name__)


def compatibility_problems(
    source: TopicState,
    target: TopicState,
    known_partitions: frozenset[int] = frozenset(),
    failback: Failback | None = None,
    ledger: str | None = None,
) -> list[str]:
    """Why an existing target topic cannot receive this source topic (empty: it can).

    ``known_partitions`` are those the ledger has written before: records there are
    the pipeline's own, and the copy reconciles against them. In a ``failback`` the target
    is the original cluster: the advice never deletes or empties its topics. ``ledger`` names the ledger in use:
    records the tool wrote look foreign to another one (a mistyped --ledger or --state-dir), so that is asked
    before any advice that deletes.
    """
    where = f"target topic {target.name!r}"
    problems = []
    if target.partitions < source.partitions:
        problems.append(
            f"{where} has {plural(target.partitions, 'partition')} but source topic {source.name!r} has "
            f"{source.partitions}; add partitions on the target (kafka-topics --alter --partitions "
            f"{source.partitions})"
            + (f". {failback.way_out(source.name, target.name)}" if failback else " or delete the target topic.")
        )
    if max_message_bytes(target) < max_message_bytes(source):
        problems.append(
            f"{where} accepts records up to {max_message_bytes(target)} bytes but source topic "
            f"{source.name!r} allows {max_message_bytes(source)}; raise max.message.bytes on the target "
            f"topic to at least {max_message_bytes(source)}."
        )
    if cleanup_policy(target) != cleanup_policy(source):
        problems.append(
            f"{where} has cleanup.policy={','.join(sorted(cleanup_policy(target)))} but source topic "
            f"{source.name!r} has {','.join(sorted(cleanup_policy(source)))}; a mismatch loses data later. "
            + (
                f"Align the target topic's cleanup.policy. {failback.way_out(source.name, target.name)}"
                if failback
                else "Align the target topic's cleanup.policy or delete it."
            )
        )
    for partition in range(min(source.partitions, target.partitions)):
        if partition in known_partitions:
            continue
        held = target.latest.get(partition, 0) - target.earliest.get(partition, 0)
        if held > 0:
            problems.append(
                f"{where} partition {partition} already holds records at offsets "
                f"{offset_range(target.earliest.get(partition, 0), target.latest.get(partition, 0))} that "
                + (f"the ledger in use ({ledger}) has" if ledger else "this run, without a ledger, has")
                + " no record of this pipeline writing; copying would mix them with the source's records. "
                "First check that this is the ledger your earlier runs used (--ledger, --state-dir or "
                "$KAFKA_MIGRATION_LEDGER_URL; in Airflow, the ledger setting): with another ledger, records this "
                "tool wrote look foreign. "
                + (
                    failback.way_out(source.name, target.name)
                    if failback
                    else "Only if it is: empty or delete the target topic, or choose another name with --rename."
                )
            )
            break
    return problems


def plan_topic(  # noqa: PLR0913 (issue 49: to take value objects next)
    source: TopicState,
    target_name: str,
    existing: TopicState | None,
    target_cluster: ClusterInfo,
    replication_factor: int | None,
    positions: Mapping[int, Position] | None = None,
    failback: Failback | None = None,
    defaults: Mapping[str, str] | None = None,
    accept_less: bool = False,
    ledger: str | None = None,
) -> tuple[TopicPlan, list[str]]:
    """The plan for one topic, and the conflicts that forbid it.

    ``positions`` says where each partition starts (ledger checkpoint, interrupted
    run, or first-run rule); without it a partition starts at its earliest offset.
    ``defaults`` are what the target gives a new topic (``topic_configs.target_defaults``).
    ``accept_less``: the operator accepts an existing target topic that keeps less than the source.
    """
    decision = decide_configs(source, existing, defaults, accept_less)
    warnings: list[str] = []
    less = shortfalls(source, existing) if existing is not None else []
    if existing is not None:
        for name, (here, there) in config_drift(source, existing).items():
            change = f"--add-config {name}={here}" if here is not None else f"--delete-config {name}"
            warnings.append(
                f"config drift: {name} is {here if here is not None else 'unset'} on the source topic but "
                f"{there if there is not None else 'unset'} on the target topic, which a run does not change "
                f"(kafka-configs.sh --bootstrap-server {target_cluster.bootstrap} --alter --entity-type topics "
                f"--entity-name {target_name} {change})"
            )
    if source.config("message.timestamp.type") == "LogAppendTime":
        warnings.append("source topic uses LogAppendTime: the copy keeps the source's append times as CreateTime")
    if existing is not None and existing.config("message.timestamp.type") == "LogAppendTime":
        warnings.append(
            "target topic uses LogAppendTime: the broker replaces the copied timestamps, so verification will fail; "
            "set message.timestamp.type=CreateTime on the target topic"
        )
    if positions is None:
        positions = {
            p: Position(source.earliest.get(p, 0), existing.latest.get(p, 0) if existing else 0, "earliest")
            for p in range(source.partitions)
        }
    known = frozenset(p for p, pos in positions.items() if pos.from_ledger)
    problems = compatibility_problems(source, existing, known, failback, ledger) if existing else []
    if less and accept_less:
        warnings.append(
            f"target topic {target_name} keeps less than the source, ACCEPTED (--accept-target-retention): "
            + "; ".join(s.describe() for s in less)
        )
    elif less:
        raise_it = "; ".join(f"{s.name}={s.source_value}" for s in less)
        problems.append(
            f"target topic {target_name!r} keeps less than source topic {source.name!r}: "
            + "; ".join(s.describe() for s in less)
            + f". Raise it on the target topic (kafka-configs.sh --bootstrap-server {target_cluster.bootstrap} "
            f"--alter --entity-type topics --entity-name {target_name} --add-config {raise_it.replace('; ', ',')}), "
            "or run with --accept-target-retention (DAG param accept_target_retention) to copy only what the "
            "target keeps (recorded in the ledger and the report)."
        )
    if existing and existing.partitions > source.partitions:
        warnings.append(
            f"target topic has {plural(existing.partitions, 'partition')}, source {source.partitions}: "
            "the extra target partitions receive nothing"
        )
    rf = replication_factor or min(source.replication_factor or 1, max(target_cluster.broker_count, 1))
    planned_rf = existing.replication_factor if existing else rf
    if source.replication_factor and planned_rf != source.replication_factor:
        why = (
            "the existing target topic's"
            if existing
            else "as given (--replication-factor)"
            if replication_factor
            else f"capped by the target's {plural(target_cluster.broker_count, 'broker')}"
        )
        warnings.append(
            f"replication factor {planned_rf} on the target, {source.replication_factor} on the source ({why})"
        )
    partitions = tuple(
        PartitionPlan(
            partition=p,
            start=positions[p].start,
            end=max(source.latest.get(p, 0), positions[p].start),
            target_start=positions[p].target_start,
            earliest=source.earliest.get(p, 0),
            latest=source.latest.get(p, 0),
            origin=positions[p].origin,
            expired=positions[p].expired,
        )
        for p in range(source.partitions)
        if p in positions
    )
    plan = TopicPlan(
        source_topic=source.name,
        target_topic=target_name,
        partitions=partitions,
        replication_factor=existing.replication_factor if existing else rf,
        configs=decision.configs,
        skipped_configs=decision.skipped,
        create=existing is None,
        warnings=tuple(warnings),
        config_decisions=decision.how,
        max_message_bytes=max_message_bytes(source),
    )
    return plan, problems


@dataclass(frozen=True)
class CreatedTopics:
    """What ``create_target_topics`` did: the topics it created (in the run's order), and the ids of the planned
    target topics (recorded with the checkpoints to recognise a topic recreated later)."""

    names: list[str]
    topic_ids: dict[str, str]


def create_target_topics(
    plan: MigrationPlan, target: KafkaCluster, on_ready: Callable[[int], None] | None = None
) -> CreatedTopics:
    """Create the target topics the plan marks for creation (batched requests), in the order the run takes
    them (``MigrationPlan.run_order``), and check them before anything is written. Safe to re-run.

    ``on_ready(n)``: the first n topics of the run order are served and checked, each time n grows, so that the
    copy of the first topics starts while the broker still creates the others (a broker takes seconds for a
    thousand new topics); a refusal found later then stops a copy that has started, as a failed run.
    """
    order = plan.run_order()
    wanted = [t for t in order if t.create]
    if wanted:
        target.find_reader_coordinator()
    done = target.create_topics((t.target_topic, len(t.partitions), t.replication_factor, t.configs) for t in wanted)
    created = []
    for topic in wanted:
        if done.get(topic.target_topic):
            log.info(
                "Created target topic %s (%s, replication factor %d, %s)",
                topic.target_topic,
                plural(len(topic.partitions), "partition"),
                topic.replication_factor,
                plural(len(topic.configs), "config"),
            )
            created.append(topic.target_topic)
    release = _Release(order, created, target, on_ready)
    described = target.wait_for_topics([t.target_topic for t in order], on_ready=release.ready)
    _check_created(plan.topics, {name: d.partitions for name, d in described.items()})
    ids = {t.target_topic: described[t.target_topic].topic_id for t in wanted}
    return CreatedTopics(created, {name: topic_id for name, topic_id in ids.items() if topic_id is not None})


class _Release:
    """Checks target topics as they come up, and tells ``on_ready`` how many of the run order are ready."""

    def __init__(
        self,
        order: Sequence[TopicPlan],
        created: Sequence[str],
        target: KafkaCluster,
        on_ready: Callable[[int], None] | None,
    ) -> None:
        self.order = order
        self.created = set(created)
        self.target = target
        self.on_ready = on_ready
        self.checked: set[str] = set()
        self.released = 0

    def ready(self, described: Mapping[str, TopicDescription]) -> None:
        """Check the newly ``described`` topics (partitions; Write and Read, which could not be asked about before
        they existed), then release the longest checked prefix of the run order."""
        _check_created(
            [t for t in self.order if t.target_topic in described], {n: d.partitions for n, d in described.items()}
        )
        check_created_topics(
            self.target,
            [name for name in described if name in self.created],
            {name: d.operations for name, d in described.items()},
            started=self.released,
        )
        self.checked.update(described)
        before = self.released
        while self.released < len(self.order) and self.order[self.released].target_topic in self.checked:
            self.released += 1
        if self.on_ready is not None and self.released > before:
            self.on_ready(self.released)


def _check_created(topics: Sequence[TopicPlan], counts: Mapping[str, int]) -> None:
    """A topic that appeared concurrently may not be what we planned: check its partition ``counts`` (as the
    wait for the topics' leaders saw them) before writing."""
    problems = []
    for topic in topics:
        partitions = counts.get(topic.target_topic)
        if partitions is None:
            problems.append(f"target topic {topic.target_topic!r} is missing after creation")
        elif partitions < len(topic.partitions):
            problems.append(
                f"target topic {topic.target_topic!r} has {plural(partitions, 'partition')}, "
                f"{len(topic.partitions)} needed"
            )
    if problems:
        from kafka_migration.exceptions import TopicConflictError

        raise TopicConflictError(problems)
