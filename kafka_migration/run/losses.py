"""Does the target still hold what earlier runs verified? Pure logic over planning's reads and the ledger.

A verified run leaves the target holding the records it verified. Later the target's log start can pass
them: a retention shorter than the source's, ``retention.bytes``, DeleteRecords, a replica lost without
its data. Every run compares, per partition it has verified before, the target's log start with the first
verified record, through the ledger's offset map. Lost records count only where the source still holds
them and they are within the source's own time retention (records the source has removed, or is about
to remove because they are past its ``retention.ms``, are not a loss), and past what the operator already
accepted as lost (``--accept-target-loss``, recorded in the ledger).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kafka_migration.model.checkpoints import Checkpoint, Key
from kafka_migration.model.offsets import BEYOND, MappedSegment, translate_position
from kafka_migration.model.plan import MigrationPlan, TargetLoss
from kafka_migration.model.state import TopicState
from kafka_migration.model.text import offset_range, per_partition, plural


def loss_candidates(
    source_topic: str, target_topic: str, existing: TopicState | None, checkpoints: Mapping[Key, Checkpoint]
) -> list[int]:
    """Partitions worth a look: verified before, and the target's log start is not at 0 any more."""
    if existing is None:
        return []
    return sorted(
        p
        for (topic, p, target), _ in checkpoints.items()
        if topic == source_topic and target == target_topic and existing.earliest.get(p, 0) > 0
    )


@dataclass(frozen=True)
class Verified:
    """What the ledger holds of a pair of clusters: the checkpoints, the verified segments (the offset map) and
    the accepted-loss marks (target offsets below a partition's mark were accepted as lost before)."""

    checkpoints: Mapping[Key, Checkpoint]
    segments: Mapping[Key, Sequence[MappedSegment]]
    accepted_marks: Mapping[Key, int]


def target_losses(
    source: TopicState,
    target_topic: str,
    existing: TopicState,
    verified: Verified,
    kept_from: Mapping[int, int],
    accept: bool,
) -> list[TargetLoss]:
    """The lost ranges of one topic, a loss per partition. ``kept_from``: per partition, the first source offset
    within the source's time retention (records before it are past it: not a loss); ``accept``: this run accepts
    what it finds."""
    checkpoints, segments, accepted_marks = verified.checkpoints, verified.segments, verified.accepted_marks
    found: list[TargetLoss] = []
    for p in loss_candidates(source.name, target_topic, existing, checkpoints):
        key = (source.name, p, target_topic)
        segs = sorted(segments.get(key, ()), key=lambda s: (s.source_start, s.source_end))
        cp = checkpoints[key]
        if not segs:
            continue  # no offset map (checkpoints seeded by a failback): nothing to compare against
        still_held = max(source.earliest.get(p, 0), kept_from.get(p, 0))
        held = translate_position(segs, still_held)
        if held.kind == BEYOND:
            continue  # the source holds no verified record any more (or all are past its retention)
        low = max(segs[0].first_record_target(), held.target_offset or 0, accepted_marks.get(key, 0))
        high = min(existing.earliest.get(p, 0), cp.target_offset)
        if high <= low:
            continue
        first = _segment_of(segs, low)
        found.append(
            TargetLoss(
                source_topic=source.name,
                target_topic=target_topic,
                partition=p,
                source_start=_source_offset(segs, low),
                source_end=cp.source_offset if high >= cp.target_offset else _source_offset(segs, high),
                target_start=low,
                target_end=high,
                verified_by=first.run_id if first is not None else cp.run_id,
                accepted=accept,
            )
        )
    return found


def _segment_of(segs: Sequence[MappedSegment], target_offset: int) -> MappedSegment | None:
    return next((s for s in segs if s.target_start <= target_offset < s.target_end), None)


def _source_offset(segs: Sequence[MappedSegment], target_offset: int) -> int:
    """The source offset of the record copied to ``target_offset`` (the inverse of the offset map)."""
    seg = _segment_of(segs, target_offset)
    if seg is None:
        later = [s for s in segs if s.target_start >= target_offset]
        return later[0].source_start if later else segs[-1].source_end
    points = [(s, t) for s, t in seg.points if t <= target_offset] or [(seg.source_start, seg.target_start)]
    s, t = points[-1]
    return min(s + (target_offset - t), seg.source_end)


def loss_message(losses: Sequence[TargetLoss], target_bootstrap: str) -> str:
    """One topic's loss, as the plan, the run's output and the report say it."""
    first = losses[0]
    records = sum(loss.records for loss in losses)
    ranges = per_partition(
        [
            (
                loss.partition,
                f"target offsets {offset_range(loss.target_start, loss.target_end, count=False)} (source "
                f"{offset_range(loss.source_start, loss.source_end, count=False)}, verified by run {loss.verified_by})",
            )
            for loss in losses
        ]
    )
    state = (
        "accepted (--accept-target-loss), recorded in the ledger; later runs do not report these again"
        if all(loss.accepted for loss in losses)
        else (
            "the source still holds them. Offsets cannot be re-created on a topic: re-migrate to a new target topic "
            f"(--rename, e.g. '{{topic}}.v2'), or accept the loss with --accept-target-loss (recorded in the ledger "
            f"and the report). Find what deleted them on {target_bootstrap}: the topic's retention.ms and "
            "retention.bytes, DeleteRecords, a replica lost without its data"
        )
    )
    return (
        f"TARGET LOST VERIFIED RECORDS: target topic {first.target_topic} no longer holds "
        f"{plural(records, 'verified record')} of {first.source_topic}: its log start moved past them in {ranges}; "
        f"{state}."
    )


def unaccepted_message(plan: MigrationPlan) -> str | None:
    """What the ledger records as the message of a run whose target lost verified records nobody accepted: the
    plan's line for each topic (``loss_message``); None when there are none."""
    by_topic: dict[tuple[str, str], list[TargetLoss]] = {}
    for loss in plan.unaccepted_losses:
        by_topic.setdefault((loss.source_topic, loss.target_topic), []).append(loss)
    lines = [loss_message(found, plan.target.bootstrap) for _, found in sorted(by_topic.items())]
    return " ".join(lines) or None


def verdict_line(plan: MigrationPlan) -> str:
    """The closing line of such a run (the CLI and the Airflow summary add the way out in their own terms)."""
    losses = plan.unaccepted_losses
    return (
        f"Migration {plan.run_id} NOT verified: the target LOST {plural(sum(x.records for x in losses), 'record')} "
        f"that earlier runs verified, in {plural(len(losses), 'partition')}"
    )
