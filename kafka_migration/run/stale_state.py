"""Does what the ledger recorded for a topic still describe the clusters? Pure logic over planning's reads.

A checkpoint says: source offsets below N were copied to the target and verified there, ending at
target offset M. That stops being true when the source topic is deleted and recreated (fewer
records than N, or more, with a new topic id), or when the target topic is deleted, truncated or
recreated. Copying on from the checkpoint would then mix two histories or leave holes, so each
case stops the run before anything is written, naming topic, partition, offsets and the way out.
"""

from __future__ import annotations

from kafka_migration.model.checkpoints import RecordedPositions, TopicIds
from kafka_migration.model.state import TopicPair
from kafka_migration.model.text import noun_for, partition_list, per_partition, plural
from kafka_migration.run.direction import Failback


def forget_command(source_cluster_id: str, source_topic: str, target_cluster_id: str, target_topic: str) -> str:
    return (
        f"kafka-migrate checkpoints forget --topic {source_topic} --target-topic {target_topic} "
        f"--source-cluster {source_cluster_id} --target-cluster {target_cluster_id}"
    )


def way_outs(name: str, target_topic: str, forget: str, failback: Failback | None) -> tuple[str, str]:
    """The way out when the source changed, and when the target did; a failback's keeps its target whole."""
    if failback is not None:
        return failback.way_out(name, target_topic), failback.way_out(name, target_topic)
    source_way_out = (
        f"The target topic {target_topic} holds the old topic's records. Copy the new topic under another target "
        f"name (--rename, e.g. '{{topic}}.v2'), or delete target topic {target_topic} and forget the checkpoints "
        f"({forget}) to copy it again from the start."
    )
    target_way_out = (
        f"Delete target topic {target_topic} and forget the checkpoints ({forget}) to copy "
        f"the source again from the start, or copy under another target name (--rename)."
    )
    return source_way_out, target_way_out


def stale_state_problems(
    pair: TopicPair,
    recorded: RecordedPositions,
    recorded_ids: TopicIds | None,
    cluster_ids: tuple[str, str],
    failback: Failback | None = None,
) -> list[str]:
    """Why the ledger's checkpoints (or an interrupted run's segments) no longer fit this topic; empty: they do.
    ``cluster_ids``: the source's and the target's.

    Each problem ends with the way out, safe in the run's direction: a ``failback`` never advises deleting
    or forgetting anything on its target, the original cluster (run/direction.py)."""
    source, target_topic, existing = pair.source, pair.target_topic, pair.existing
    checkpoints, pending = recorded.checkpoints, recorded.pending
    source_cluster_id, target_cluster_id = cluster_ids
    name = source.name
    cps = {key[1]: cp for key, cp in checkpoints.items() if key[0] == name and key[2] == target_topic}
    pend = {key[1]: seg for key, seg in pending.items() if key[0] == name and key[2] == target_topic}
    if not cps and not pend:
        return []
    forget = forget_command(source_cluster_id, name, target_cluster_id, target_topic)
    by = sorted({cp.run_id for cp in cps.values()} | {seg.run_id for seg in pend.values()})
    runs = f"{noun_for(len(by), 'run')} {', '.join(by)}"
    problems: list[str] = []

    # -- the source: recreated under the same name? ------------------------------------------------
    recreated_source = (
        recorded_ids is not None
        and recorded_ids.source_topic_id is not None
        and source.topic_id is not None
        and recorded_ids.source_topic_id != source.topic_id
    )
    source_way_out, target_way_out = way_outs(name, target_topic, forget, failback)
    if recreated_source:
        verified = per_partition([(p, f"verified below {cp.source_offset}") for p, cp in cps.items()]) or "none"
        ends = per_partition([(p, f"ends at {source.latest.get(p, 0)}") for p in range(source.partitions)])
        problems.append(
            f"source topic {name} was deleted and recreated since run {recorded_ids.run_id} verified it "  # type: ignore[union-attr]
            f"(topic id {recorded_ids.source_topic_id} then, {source.topic_id} now; checkpoints: {verified}; "  # type: ignore[union-attr]
            f"now: {ends}): its offsets now belong to other records. {source_way_out} If the cluster at this "
            f"address is not the one the ledger knows as {source_cluster_id}, use another ledger (--ledger)."
        )
    else:
        gone = sorted(p for p in cps if p >= source.partitions)
        if gone:
            gone_by = sorted({cps[p].run_id for p in gone})
            problems.append(
                f"source topic {name} has {plural(source.partitions, 'partition')}, but "
                f"{noun_for(len(gone_by), 'run')} {', '.join(gone_by)} verified {partition_list(gone)} of it: the "
                f"topic was deleted and recreated with fewer partitions. {source_way_out}"
            )
        behind = [
            (p, f"ends at {source.latest.get(p, 0)}, verified below {cp.source_offset} by run {cp.run_id}")
            for p, cp in cps.items()
            if p < source.partitions and source.latest.get(p, 0) < cp.source_offset
        ]
        if behind:
            problems.append(
                f"source topic {name} now ends before its checkpoints in {partition_list(p for p, _ in behind)} "
                f"({per_partition(behind)}): the topic was deleted and recreated, or truncated. Copying on would mix "
                f"two histories in the target. {source_way_out}"
            )

    # -- the target: deleted, truncated or recreated? ------------------------------------------------
    if existing is None:
        if cps:
            ends = per_partition([(p, f"verified below {cp.target_offset}") for p, cp in cps.items()])
            gone_way_out = (
                failback.way_out(name, target_topic)
                if failback is not None
                else f"Forget the checkpoints ({forget}) to copy the source again from the start, or copy under "
                "another target name (--rename)."
            )
            problems.append(
                f"target topic {target_topic} no longer exists, but {runs} verified {name} there, in "
                f"{partition_list(cps)} ({ends}): it was deleted after a verified run, and those records are gone. "
                f"{gone_way_out}"
            )
        return problems
    recreated_target = (
        recorded_ids is not None
        and recorded_ids.target_topic_id is not None
        and existing.topic_id is not None
        and recorded_ids.target_topic_id != existing.topic_id
    )
    if recreated_target:
        ends = per_partition([(p, f"ends at {existing.latest.get(p, 0)}") for p in range(existing.partitions)])
        problems.append(
            f"target topic {target_topic} was deleted and recreated since run {recorded_ids.run_id} verified "  # type: ignore[union-attr]
            f"{name} there (topic id {recorded_ids.target_topic_id} then, {existing.topic_id} now; now: {ends}): "  # type: ignore[union-attr]
            f"the verified records are not in it any more. {target_way_out}"
        )
        return problems
    same_target = (
        recorded_ids is not None
        and recorded_ids.target_topic_id is not None
        and recorded_ids.target_topic_id == existing.topic_id
    )
    if same_target:
        # The very topic the checkpoints were verified in: deleting records cannot lower its end (DeleteRecords
        # moves its start), so its end offsets are not compared. Where ids are unknown, the offsets must tell.
        return problems
    missing = sorted(p for p in set(cps) | set(pend) if p >= existing.partitions)
    if missing:
        problems.append(
            f"target topic {target_topic} has {plural(existing.partitions, 'partition')}, but {runs} wrote "
            f"{name} to {partition_list(missing)} there: it was recreated with fewer partitions. {target_way_out}"
        )
    truncated: list[tuple[int, str]] = []
    for p in sorted(set(cps) | set(pend)):
        if p >= existing.partitions:
            continue
        end = existing.latest.get(p, 0)
        if p in cps and end < cps[p].target_offset:
            cp = cps[p]
            truncated.append(
                (
                    p,
                    f"ends at {end}, verified below {cp.target_offset} by run {cp.run_id} "
                    f"(source below {cp.source_offset})",
                )
            )
        elif p not in cps and end < pend[p].target_start:
            seg = pend[p]
            truncated.append(
                (
                    p,
                    f"ends at {end}, below offset {seg.target_start} where the interrupted run {seg.run_id} began "
                    f"writing source offset {seg.source_start}",
                )
            )
    if truncated:
        problems.append(
            f"target topic {target_topic} now ends below what was written there in "
            f"{partition_list(p for p, _ in truncated)} ({per_partition(truncated)}): it was truncated or recreated "
            f"after {name} was copied there. {target_way_out}"
        )
    return problems
