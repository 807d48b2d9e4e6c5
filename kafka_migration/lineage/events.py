"""OpenLineage events of a migration run, a consumer group sync, a cutover and a failback, built from plain values.

Pure: nothing here sends, reads a cluster or the ledger. A run's START is built from its plan; its COMPLETE or
FAIL from its sign-off report (``model/report.SignoffReport``, report.json as read), so that the datasets, counts and
checksums an event carries are the ones of the report whose SHA-256 it names. A run that ends ``verified`` or
``up_to_date`` COMPLETEs; any other status (differences, could not verify, failed, target lost) FAILs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any

from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState
from openlineage.client.facet_v2 import error_message_run, job_type_job, output_statistics_output_dataset, parent_run

from kafka_migration.lineage.facets import (
    MIGRATION_FACET,
    POSITIONS_FACET,
    PRODUCER,
    KafkaMigrationPositionsRunFacet,
    KafkaMigrationRunFacet,
)
from kafka_migration.lineage.moves import CutoverLineage
from kafka_migration.lineage.naming import JOB_NAMESPACE, canonical_server, job_name, namespace, run_uuid
from kafka_migration.model.groups import GOOD_OUTCOMES, GroupSyncResult
from kafka_migration.model.plan import MigrationPlan
from kafka_migration.model.report import ReportCluster, ReportSchemas, SignoffReport

GOOD_RUN_STATUSES = frozenset({"verified", "up_to_date"})
VERIFIED_TOPIC = "verified"  # the report's topic verdict of a topic copied and verified (not "up to date")
RUN, GROUP_SYNC, CUTOVER, FAILBACK = "run", "group_sync", "cutover", "failback"
_JOB_TYPES = {RUN: "MIGRATION", GROUP_SYNC: "GROUP_SYNC", CUTOVER: "CUTOVER", FAILBACK: "FAILBACK"}


def now() -> str:
    return datetime.now(UTC).isoformat()


def _job(kind: str, source: str, target: str, job_namespace: str) -> Job:
    facet = job_type_job.JobTypeJobFacet(
        processingType="BATCH", integration="KAFKA_MIGRATION", jobType=_JOB_TYPES[kind], producer=PRODUCER
    )
    return Job(namespace=job_namespace, name=job_name(kind, source, target), facets={"jobType": facet})


def _pairs(pairs: Iterable[tuple[str, str | None]]) -> list[tuple[str, str | None]]:
    return sorted(set(pairs), key=lambda p: (p[0], p[1] or ""))


def datasets(
    source: str,
    target: str,
    topics: Iterable[tuple[str, str | None]],
    written: Mapping[str, tuple[int, int]] | None = None,
) -> tuple[list[InputDataset], list[OutputDataset]]:
    """Inputs (source topics) and outputs (target topics) in OpenLineage's Kafka naming; ``written``: per target
    topic (records, bytes) copied, as the outputs' outputStatistics."""
    pairs = _pairs(topics)
    inputs = [InputDataset(namespace=namespace(source), name=s) for s in sorted({s for s, _ in pairs})]
    outputs = []
    for name in sorted({t for _, t in pairs if t}):
        facets: dict[str, Any] = {}
        if written and name in written:
            records, size = written[name]
            facets["outputStatistics"] = output_statistics_output_dataset.OutputStatisticsOutputDatasetFacet(
                rowCount=records, size=size, producer=PRODUCER
            )
        outputs.append(OutputDataset(namespace=namespace(target), name=name, outputFacets=facets))
    return inputs, outputs


def run_start(plan: MigrationPlan, job_namespace: str = JOB_NAMESPACE, event_time: str | None = None) -> RunEvent:
    """A run's START, once planned: the topics it will copy and the clusters."""
    facet = KafkaMigrationRunFacet(
        runId=plan.run_id,
        status="running",
        verdict="RUNNING",
        source={"clusterId": plan.source.cluster_id, "bootstrap": canonical_server(plan.source.bootstrap)},
        target={"clusterId": plan.target.cluster_id, "bootstrap": canonical_server(plan.target.bootstrap)},
        producer=PRODUCER,
    )
    inputs, outputs = datasets(
        plan.source.bootstrap, plan.target.bootstrap, ((t.source_topic, t.target_topic) for t in plan.topics)
    )
    return RunEvent(
        eventType=RunState.START,
        eventTime=event_time or now(),
        run=Run(runId=run_uuid(RUN, plan.run_id), facets={MIGRATION_FACET: facet}),
        job=_job(RUN, plan.source.bootstrap, plan.target.bootstrap, job_namespace),
        inputs=inputs,
        outputs=outputs,
        producer=PRODUCER,
    )


# The facet's name of each partition field, in the facet's order; a field the report has no value for is left out.
_PARTITION_FIELDS = {
    "partition": "partition",
    "status": "status",
    "sourceStart": "source_start",
    "sourceEnd": "source_end",
    "targetStart": "target_start",
    "targetEnd": "target_end",
    "copiedRecords": "copied_records",
    "sourceRecords": "source_records",
    "targetRecords": "target_records",
    "sourceChecksum": "source_checksum",
    "targetChecksum": "target_checksum",
    "firstDifference": "first_difference",
}
_VERSION_FIELDS = {
    "sourceSubject": "source_subject",
    "targetSubject": "target_subject",
    "version": "version",
    "format": "format",
    "sourceId": "source_id",
    "targetId": "target_id",
    "action": "action",
    "fingerprint": "fingerprint",
}


def _present(value: object, names: Mapping[str, str]) -> dict[str, Any]:
    """``value``'s fields under the facet's ``names``, those without a value (None) left out."""
    found = {ours: getattr(value, theirs) for ours, theirs in names.items()}
    return {name: v for name, v in found.items() if v is not None}


def _cluster(cluster: ReportCluster) -> dict[str, Any]:
    return {"clusterId": cluster.cluster_id, "bootstrap": canonical_server(cluster.bootstrap)}


def migration_facet(report: SignoffReport, sha256: str | None) -> KafkaMigrationRunFacet:
    """The ``kafkaMigration`` facet of a finished run: the report's evidence, per topic and partition."""
    totals = report.totals
    topics = [
        {
            "sourceTopic": t.source_topic,
            **({"targetTopic": t.target_topic} if t.target_topic else {}),
            "verdict": t.verdict,
            "recordsCopied": t.records_copied,
            "recordsVerified": t.records_verified,
            "partitions": [_present(p, _PARTITION_FIELDS) for p in t.partitions],
        }
        for t in report.topics
    ]
    return KafkaMigrationRunFacet(
        runId=report.run.run_id,
        status=report.run.status,
        verdict=report.verdict,
        reportSha256=sha256,
        message=report.run.message or None,
        source=_cluster(report.scope.source),
        target=_cluster(report.scope.target),
        totals={
            "topics": totals.topics,
            "partitions": totals.partitions,
            "recordsCopied": totals.records_copied,
            "recordsVerified": totals.records_verified,
            "partitionsVerified": totals.partitions_verified,
            "partitionsNotVerified": totals.partitions_not_verified,
        },
        topics=topics,
        schemas=_schemas(report.schemas),
        producer=PRODUCER,
    )


def _schemas(section: ReportSchemas | None) -> dict[str, Any] | None:
    """The report's schema section as the facet carries it: subjects, versions and ids, the id map, the counts."""
    if section is None:
        return None
    return {
        "mode": section.mode,
        "sourceRegistry": section.source_registry,
        "targetRegistry": section.target_registry,
        "versions": [_present(v, _VERSION_FIELDS) for v in section.versions],
        "idMap": list(section.id_map),
        "keysTranslated": section.keys_translated,
        "valuesTranslated": section.values_translated,
    }


def report_datasets(report: SignoffReport) -> tuple[list[InputDataset], list[OutputDataset]]:
    """The datasets of a report's topics; each target topic with the records and bytes copied to it."""
    scope = report.scope
    written = {t.target_topic: (t.records_copied, t.bytes_copied) for t in report.topics if t.target_topic}
    return datasets(
        scope.source.bootstrap,
        scope.target.bootstrap,
        ((t.source_topic, t.target_topic) for t in report.topics),
        written,
    )


def run_end(
    report: SignoffReport,
    sha256: str | None,
    job_namespace: str = JOB_NAMESPACE,
    event_time: str | None = None,
    error: str | None = None,
) -> RunEvent:
    """A run's COMPLETE (verified, up to date) or FAIL (anything else, ``error`` for a run that broke off)."""
    run, scope = report.run, report.scope
    good = run.status in GOOD_RUN_STATUSES and error is None
    facets: dict[str, Any] = {MIGRATION_FACET: migration_facet(report, sha256)}
    if not good:
        facets["errorMessage"] = error_message_run.ErrorMessageRunFacet(
            message=error or run.message or f"the run ended {report.verdict}",
            programmingLanguage="python",
            producer=PRODUCER,
        )
    inputs, outputs = report_datasets(report)
    return RunEvent(
        eventType=RunState.COMPLETE if good else RunState.FAIL,
        eventTime=event_time or now(),
        run=Run(runId=run_uuid(RUN, run.run_id), facets=facets),
        job=_job(RUN, scope.source.bootstrap, scope.target.bootstrap, job_namespace),
        inputs=inputs,
        outputs=outputs,
        producer=PRODUCER,
    )


def verified_topics(report: SignoffReport) -> list[str]:
    """Target topics a run copied and verified: none unless the whole run is verified (a run with differences,
    or one that failed, vouches for nothing); a topic with nothing new is not among them (nothing changed)."""
    if report.run.status != "verified":
        return []
    return sorted(name for t in report.topics if t.verdict == VERIFIED_TOPIC and (name := t.target_topic))


def _group_partitions(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per group, each partition's source offset and the target offset it was translated to."""
    keys = {
        "sourceTopic": "source_topic",
        "partition": "partition",
        "sourceOffset": "source_offset",
        "targetTopic": "target_topic",
        "targetOffset": "target_offset",
        "translation": "translation",
        "translatedBy": "translated_by",
        "outcome": "outcome",
        "proof": "proof",
    }
    groups: dict[str, list[dict[str, Any]]] = {}
    for r in sorted(rows, key=lambda r: (r["group_id"], r["source_topic"], r["partition"])):
        groups.setdefault(r["group_id"], []).append(
            {ours: r[theirs] for ours, theirs in keys.items() if r.get(theirs) is not None}
        )
    return [{"groupId": g, "partitions": parts} for g, parts in groups.items()]


@dataclass(frozen=True)
class _Move:
    """A sync, cutover or failback as a pair of events: ``kind``, the key of its run id, the clusters in the
    direction it moved, whether it completed, when it started."""

    kind: str
    run_key: str
    source: str
    target: str
    ok: bool
    started: str


def _pair(
    move: _Move,
    topics: Iterable[tuple[str, str | None]],
    facet: KafkaMigrationPositionsRunFacet,
    job_namespace: str,
    parent_run_id: str | None = None,
) -> list[RunEvent]:
    """START and COMPLETE (or FAIL) of a sync, cutover or failback; a sync inside a run names it its parent."""
    kind, source, target, ok, started = move.kind, move.source, move.target, move.ok, move.started
    run_id = run_uuid(kind, move.run_key)
    job = _job(kind, source, target, job_namespace)
    inputs, outputs = datasets(source, target, topics)
    facets: dict[str, Any] = {POSITIONS_FACET: facet}
    if parent_run_id is not None:
        facets["parent"] = parent_run.ParentRunFacet(
            run=parent_run.Run(runId=run_uuid(RUN, parent_run_id)),
            job=parent_run.Job(namespace=job_namespace, name=job_name(RUN, source, target)),
            producer=PRODUCER,
        )
    if not ok:
        facets["errorMessage"] = error_message_run.ErrorMessageRunFacet(
            message=facet.message or f"{kind} failed", programmingLanguage="python", producer=PRODUCER
        )
    start = {k: v for k, v in facets.items() if k == "parent"}
    end_type = RunState.COMPLETE if ok else RunState.FAIL
    return [
        RunEvent(eventType=RunState.START, eventTime=started, run=Run(runId=run_id, facets=start), job=job,
                 inputs=inputs, outputs=outputs, producer=PRODUCER),
        RunEvent(eventType=end_type, eventTime=now(), run=Run(runId=run_id, facets=facets), job=job,
                 inputs=inputs, outputs=outputs, producer=PRODUCER),
    ]  # fmt: skip


def group_sync_events(
    result: GroupSyncResult, source: str, target: str, started: str, job_namespace: str = JOB_NAMESPACE
) -> list[RunEvent]:
    """A consumer group sync that wrote: each group's translated positions; FAIL when a partition is not
    synced with proof. ``source``/``target``: the clusters' bootstrap addresses as the sync used them."""
    rows = [{"group_id": g.group_id, **asdict(p)} for g in result.groups for p in g.partitions]
    ok = all(r["outcome"] in GOOD_OUTCOMES for r in rows)
    facet = KafkaMigrationPositionsRunFacet(
        kind=GROUP_SYNC,
        id=result.sync_id,
        outcome="completed" if ok else "failed",
        runId=result.run_id,
        groups=_group_partitions(rows),
        message=None if ok else f"{sum(r['outcome'] not in GOOD_OUTCOMES for r in rows)} partition(s) not synced",
        producer=PRODUCER,
    )
    topics = ((r["source_topic"], r.get("target_topic")) for r in rows)
    move = _Move(GROUP_SYNC, result.sync_id, source, target, ok, started)
    return _pair(move, topics, facet, job_namespace, result.run_id)


def cutover_events(
    cutover: CutoverLineage, group_rows: Sequence[Mapping[str, Any]], job_namespace: str = JOB_NAMESPACE
) -> list[RunEvent]:
    """A cutover (or failback, ``cutover.kind``): each partition's ends, where each group starts on the other
    side, and whether it completed."""
    kind, cutover_id, run_id, topics = cutover.kind, cutover.cutover_id, cutover.run_id, cutover.topics
    ends = [
        {
            "sourceTopic": t["source_topic"],
            "targetTopic": t["target_topic"],
            "partitions": [
                {"partition": p["partition"], "sourceEnd": p["source_end"], "targetEnd": p["target_end"]}
                for p in t["partitions"]
            ],
        }
        for t in topics
    ]
    if kind == FAILBACK:  # records moved target -> source: the datasets and ends read that way
        ends = [
            {
                "sourceTopic": e["targetTopic"],
                "targetTopic": e["sourceTopic"],
                "partitions": [
                    {"partition": p["partition"], "sourceEnd": p["targetEnd"], "targetEnd": p["sourceEnd"]}
                    for p in e["partitions"]
                ],
            }
            for e in ends
        ]
    facet = KafkaMigrationPositionsRunFacet(
        kind=kind,
        id=cutover_id,
        outcome="completed" if cutover.ok else "failed",
        runId=run_id,
        groups=_group_partitions(group_rows),
        topics=ends,
        message=cutover.message,
        producer=PRODUCER,
    )
    pairs = [(e["sourceTopic"], e["targetTopic"]) for e in ends]
    move = _Move(kind, f"{cutover_id}:{run_id}", cutover.source, cutover.target, cutover.ok, cutover.started)
    return _pair(move, pairs, facet, job_namespace)
