"""What the target keeps and still holds: the planner's checks that look records up by time on the source.

- Records older than the target topic keeps (its time retention, or the source's that a created topic
  gets) are not copied: the target would delete them at its next retention pass, so a run never verifies
  them. They are past the source's own retention too (or the operator accepted a target that keeps less).
- An existing target topic that keeps less than the source and was not accepted is refused by
  ``topics.plan_topic``; here its refusal gets the records now at risk, counted on the source.
- Verified records the target lost since earlier runs (``losses``) are found with the ledger's offset map.

Each check is one lookup by time of the partitions concerned, none when none are (``kafka.offsets``: bounded
requests, a couple in flight, so that a broker answers each in time whatever the partition count).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from kafka_migration.kafka.clients import KafkaCluster
from kafka_migration.ledger import Ledger
from kafka_migration.model.checkpoints import Checkpoint, Key
from kafka_migration.model.plan import ClusterInfo, TargetLoss, TopicPlan
from kafka_migration.model.state import TopicState
from kafka_migration.model.text import partition_list, plural
from kafka_migration.run import retention
from kafka_migration.run.losses import Verified, loss_candidates, loss_message, target_losses


def _now_ms() -> int:
    return int(time.time() * 1000)


def _kept_by(state: TopicState, existing: TopicState | None) -> int | None:
    """The time retention of the target topic: the existing topic's, or the source's that a created one gets."""
    return retention.retention_ms(existing if existing is not None else state)


def _first_kept(source: KafkaCluster, wanted: Mapping[tuple[str, int], int]) -> dict[tuple[str, int], int]:
    """Per partition, the first offset whose timestamp is at or after the asked time (-1: every record older)."""
    return source.offsets_for_times(wanted) if wanted else {}


def drop_aged(
    source: KafkaCluster,
    topics: Sequence[TopicPlan],
    states: Mapping[str, TopicState],
    targets: Mapping[str, TopicState],
    refused: set[str],
) -> tuple[list[TopicPlan], list[str], list[str]]:
    """(topics with their aged records left out, warnings, problems). ``refused``: source topics whose target keeps
    less without acceptance: their records at risk are counted for the refusal instead."""
    now = _now_ms()
    wanted: dict[tuple[str, int], int] = {}
    for topic in topics:
        kept = _kept_by(states[topic.source_topic], targets.get(topic.target_topic))
        if kept is None:
            continue
        for p in topic.partitions:
            if topic.source_topic in refused or (p.offset_span > 0 and p.origin != "resume"):
                wanted[(topic.source_topic, p.partition)] = now - kept
    first = _first_kept(source, wanted)
    out: list[TopicPlan] = []
    warnings: list[str] = []
    problems: list[str] = []
    for topic in topics:
        kept = _kept_by(states[topic.source_topic], targets.get(topic.target_topic))
        shown = retention.human("retention.ms", str(kept)) if kept is not None else ""
        if topic.source_topic in refused:
            at_risk = {
                p.partition: max(0, _cut(first, topic, p.partition, p.latest) - p.earliest)
                for p in topic.partitions
                if (topic.source_topic, p.partition) in first
            }
            if sum(at_risk.values()):
                problems.append(
                    f"{plural(sum(at_risk.values()), 'record')} of source topic {topic.source_topic!r} are older "
                    f"than target topic {topic.target_topic!r} keeps ({shown}) in "
                    f"{partition_list(p for p, n in at_risk.items() if n)}: the target would delete them at its next "
                    "retention pass."
                )
            out.append(topic)
            continue
        partitions = []
        aged: dict[int, int] = {}
        for p in topic.partitions:
            if (topic.source_topic, p.partition) not in first:
                partitions.append(p)
                continue
            start = min(max(_cut(first, topic, p.partition, p.end), p.start), p.end)
            if start > p.start:
                aged[p.partition] = start - p.start
                p = replace(p, start=start, aged=p.aged + start - p.start)
            partitions.append(p)
        if aged:
            warnings.append(
                f"{topic.source_topic}: {plural(sum(aged.values()), 'offset')} in {partition_list(aged)} hold records "
                f"older than target topic {topic.target_topic} keeps ({shown}); not copied: the target would delete "
                "them at its next retention pass, so no run verifies them (they are past the source's own time "
                "retention too, or a target that keeps less was accepted)"
            )
            topic = replace(topic, partitions=tuple(partitions))
        out.append(topic)
    return out, warnings, problems


def _cut(first: Mapping[tuple[str, int], int], topic: TopicPlan, partition: int, none_newer: int) -> int:
    offset = first[(topic.source_topic, partition)]
    return none_newer if offset < 0 else offset


@dataclass(frozen=True)
class PlanningReads:
    """What a loss check looks at, as planning read it: the (source topic, target topic) pairs, a source topic
    with more than one target topic too (it was verified into another since, e.g. re-migrated under a new name),
    the source's and the target's topic states, and the checkpoints of the pair of clusters."""

    pairs: Sequence[tuple[str, str]]
    states: Mapping[str, TopicState]
    targets: Mapping[str, TopicState]
    checkpoints: Mapping[Key, Checkpoint]


def find_losses(
    source: KafkaCluster,
    ledger: Ledger | None,
    clusters: tuple[ClusterInfo, ClusterInfo],
    read: PlanningReads,
    accept_loss: bool = False,
    accept_less: bool = False,
) -> tuple[list[TargetLoss], list[str]]:
    """Verified records each target topic lost since earlier runs, and a line per topic that lost any, on the
    (source, target) ``clusters``. ``accept_loss``: this run accepts what it finds; ``accept_less``: the target's
    own shorter time retention is accepted too."""
    source_info, target_info = clusters
    pairs, states, targets, checkpoints = read.pairs, read.states, read.targets, read.checkpoints
    candidates = {
        (topic, target): loss_candidates(topic, target, targets.get(target), checkpoints)
        for topic, target in pairs
        if topic in states
    }
    candidates = {pair: parts for pair, parts in candidates.items() if parts}
    if ledger is None or not candidates:
        return [], []
    now = _now_ms()
    wanted: dict[tuple[str, str], dict[int, int]] = {}
    for (topic, target), parts in candidates.items():
        limits = [retention.retention_ms(states[topic])]
        if accept_less:
            limits.append(retention.retention_ms(targets[target]))
        finite = [ms for ms in limits if ms is not None]
        if finite:
            wanted[(topic, target)] = dict.fromkeys(parts, now - min(finite))
    first_of = _first_kept_per_pair(source, wanted)
    topics = sorted({topic for topic, _ in candidates})
    segments = ledger.verified_segments(source_info.cluster_id, target_info.cluster_id, topics)
    marks = ledger.accepted_loss_marks(source_info.cluster_id, target_info.cluster_id)
    losses: list[TargetLoss] = []
    lines: list[str] = []
    for topic, target_topic in sorted(candidates):
        state = states[topic]
        first = first_of.get((topic, target_topic), {})
        kept_from = {p: state.latest.get(p, 0) if offset < 0 else offset for p, offset in first.items()}
        verified = Verified(checkpoints, segments, marks)
        found = target_losses(state, target_topic, targets[target_topic], verified, kept_from, accept_loss)
        if found:
            losses.extend(found)
            lines.append(loss_message(found, target_info.bootstrap))
    return losses, lines


def _first_kept_per_pair(
    source: KafkaCluster, wanted: Mapping[tuple[str, str], Mapping[int, int]]
) -> dict[tuple[str, str], dict[int, int]]:
    """``_first_kept`` per (source topic, target topic), per partition at its time: one lookup, and one more for a
    source partition that a second target topic wants at another time (it keeps less, accepted)."""
    lookups: list[dict[tuple[str, int], int]] = []
    for (topic, _), times in wanted.items():
        for p, ms in times.items():
            for lookup in lookups:
                if lookup.setdefault((topic, p), ms) == ms:
                    break
            else:
                lookups.append({(topic, p): ms})
    found: dict[tuple[str, int, int], int] = {}
    for lookup in lookups:
        for (topic, p), offset in _first_kept(source, lookup).items():
            found[(topic, p, lookup[(topic, p)])] = offset
    return {pair: {p: found[(pair[0], p, ms)] for p, ms in times.items()} for pair, times in wanted.items()}
