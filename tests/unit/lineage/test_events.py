"""A run's events as run/evidence.py sends them: START, then COMPLETE or FAIL built from report.json, each event
and facet valid against the OpenLineage schemas, the datasets, counts and checksums those of the report."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from openlineage.client.serde import Serde

from kafka_migration.ledger import Ledger
from kafka_migration.lineage import emit
from kafka_migration.lineage.events import (
    cutover_events,
    datasets,
    group_sync_events,
    run_end,
    run_start,
    verified_topics,
)
from kafka_migration.lineage.facets import PRODUCER
from kafka_migration.lineage.moves import CutoverLineage
from kafka_migration.lineage.naming import run_uuid
from kafka_migration.model.groups import GroupSync, GroupSyncResult, PartitionSync
from kafka_migration.model.report import SignoffReport
from kafka_migration.model.results import MISMATCH
from kafka_migration.run.evidence import RunEvidence, close_run, record_failure, run_opened
from tests.unit.factories import migration_plan, topic_plan
from tests.unit.ledger.test_ledger import outcomes, plan
from tests.unit.lineage.schemas import validate_event

STARTED = "2026-11-27T10:00:00+00:00"


@pytest.fixture
def collected() -> emit.Collector:
    return emit.Collector()


def routed(collector: emit.Collector) -> emit.Lineage:
    """Where the run functions send their events in these tests: the collector, passed as the front doors pass it."""
    return emit.Lineage(collector)


def as_dicts(collector: emit.Collector) -> list[dict[str, Any]]:
    events = [json.loads(Serde.to_json(e)) for e in collector.events]
    for event in events:
        validate_event(event)
    return events


def _run(tmp_path: Path, match: dict[int, bool], collector: emit.Collector) -> tuple[Ledger, Any]:
    ledger = Ledger.open(f"sqlite:///{tmp_path / 'ledger.db'}")
    p = plan("run-1", 0, 100, 0)
    ledger.start_run(p, trigger="cli")
    run_opened(p, routed(collector))
    copy, verify = outcomes(p, match)
    if not all(match.values()):  # as verification reports a topic with a differing partition
        verify = replace(verify, status=MISMATCH)
    evidence = RunEvidence(p, {"orders": copy}, {"orders": verify})
    ledger.record_topics(p, [(p.topics[0], copy, verify, None)])
    return ledger, evidence


def test_a_verified_run_starts_and_completes_with_the_reports_evidence(tmp_path: Path, collected) -> None:  # type: ignore[no-untyped-def]
    ledger, evidence = _run(tmp_path, {0: True, 1: True}, collected)
    files = close_run(ledger, evidence, None, tmp_path / "reports", routed(collected))
    start, complete = as_dicts(collected)
    assert (start["eventType"], complete["eventType"]) == ("START", "COMPLETE")
    assert start["run"]["runId"] == complete["run"]["runId"]
    assert start["job"] == complete["job"] and complete["job"]["name"] == "kafka-migrate.run[s:9092->t:9092]"
    report = json.loads(files.json.read_bytes())
    assert [(d["namespace"], d["name"]) for d in complete["inputs"]] == [("kafka://s:9092", "orders")]
    assert [(d["namespace"], d["name"]) for d in complete["outputs"]] == [("kafka://t:9092", "copy.orders")]
    (topic,) = report["topics"]
    stats = complete["outputs"][0]["outputFacets"]["outputStatistics"]
    assert stats["rowCount"] == topic["records_copied"] == 200
    facet = complete["run"]["facets"]["kafkaMigration"]
    assert facet["reportSha256"] == files.sha256 == ledger.run("run-1").report_sha256
    assert facet["verdict"] == report["verdict"] == "VERIFIED" and facet["status"] == "verified"
    assert facet["totals"]["recordsCopied"] == report["totals"]["records_copied"]
    (ftopic,) = facet["topics"]
    for ours, theirs in zip(ftopic["partitions"], topic["partition_details"], strict=True):
        assert (ours["partition"], ours["status"]) == (theirs["partition"], theirs["status"])
        assert (ours["sourceStart"], ours["sourceEnd"]) == (theirs["source_start"], theirs["source_end"])
        assert (ours["targetStart"], ours["targetEnd"]) == (theirs["target_start"], theirs["target_end"])
        assert (ours["sourceRecords"], ours["targetRecords"]) == (theirs["source_records"], theirs["target_records"])
        assert (ours["sourceChecksum"], ours["targetChecksum"]) == (
            theirs["source_checksum"],
            theirs["target_checksum"],
        )
    assert verified_topics(SignoffReport.from_content(report)) == ["copy.orders"]


def test_a_run_with_differences_fails_and_names_no_verified_topic(tmp_path: Path, collected) -> None:  # type: ignore[no-untyped-def]
    ledger, evidence = _run(tmp_path, {0: True, 1: False}, collected)
    files = close_run(ledger, evidence, None, tmp_path / "reports", routed(collected))
    _start, fail = as_dicts(collected)
    assert fail["eventType"] == "FAIL"
    facet = fail["run"]["facets"]["kafkaMigration"]
    assert facet["status"] == "mismatch" and facet["verdict"] == "NOT VERIFIED"
    assert [p["status"] for p in facet["topics"][0]["partitions"]] == ["verified", "mismatch"]
    assert facet["topics"][0]["partitions"][1]["firstDifference"] == "value differs"
    assert "errorMessage" in fail["run"]["facets"]
    assert verified_topics(SignoffReport.read(files.json)) == []


def test_a_failed_run_fails_with_its_error(tmp_path: Path, collected) -> None:  # type: ignore[no-untyped-def]
    ledger = Ledger.open(f"sqlite:///{tmp_path / 'ledger.db'}")
    p = plan("run-2", 0, 100, 0)
    ledger.start_run(p, trigger="cli")
    run_opened(p, routed(collected))
    record_failure(ledger, "run-2", "copy of orders[0] broke off", tmp_path / "reports", routed(collected))
    start, fail = as_dicts(collected)
    assert (start["eventType"], fail["eventType"]) == ("START", "FAIL")
    assert fail["run"]["facets"]["errorMessage"]["message"] == "copy of orders[0] broke off"
    assert fail["run"]["facets"]["kafkaMigration"]["status"] == "failed"
    assert [d["name"] for d in fail["outputs"]] == ["copy.orders"]


def test_a_dry_run_sends_nothing(collected) -> None:  # type: ignore[no-untyped-def]
    p = plan("run-3", 0, 100, 0)
    run_opened(type(p)(**{**vars(p), "options": {"dry_run": True}}), routed(collected))
    assert collected.events == []


def _sync(outcome: str) -> GroupSyncResult:
    part = PartitionSync(
        "billing", "orders", 0, 40, None, 100, "copy.orders", 40, None, "within", "run-1", "write", outcome, None,
        "same_record",
    )  # fmt: skip
    group = GroupSync("billing", "Empty", False, "Empty", False, (part,))
    return GroupSyncResult("run-1__groups", "run-1", "src", "tgt", False, False, (group,))


def test_group_sync_and_cutover_events_carry_the_translated_positions() -> None:
    for outcome, end in (("synced", "COMPLETE"), ("not_proven", "FAIL")):
        events = [json.loads(Serde.to_json(e)) for e in group_sync_events(_sync(outcome), "S:1", "T:2", STARTED)]
        for event in events:
            validate_event(event)
        assert [e["eventType"] for e in events] == ["START", end]
        facet = events[1]["run"]["facets"]["kafkaMigrationPositions"]
        (part,) = facet["groups"][0]["partitions"]
        assert (part["sourceOffset"], part["targetOffset"], part["outcome"]) == (40, 40, outcome)
        assert events[1]["run"]["facets"]["parent"]["job"]["name"] == "kafka-migrate.run[s:1->t:2]"
    ends = [{"partition": 0, "source_end": 9, "target_end": 7}]
    topics = [{"source_topic": "orders", "target_topic": "copy.orders", "partitions": ends}]
    row = {"group_id": "billing", "source_topic": "orders", "partition": 0, "source_offset": 9, "outcome": "synced"}
    rows = [{**row, "target_topic": "copy.orders", "target_offset": 7}]
    for kind in ("cutover", "failback"):
        events = cutover_events(
            CutoverLineage(kind, "c1", "run-9", "S:1", "T:2", topics, True, "ok", "2026-11-27T10:00:00+00:00"), rows
        )
        start, done = (json.loads(Serde.to_json(e)) for e in events)
        validate_event(start)
        validate_event(done)
        ends = done["run"]["facets"]["kafkaMigrationPositions"]["topics"][0]
        assert (ends["partitions"][0]["sourceEnd"], done["eventType"]) == ((9 if kind == "cutover" else 7), "COMPLETE")


def test_a_group_sync_with_one_partition_not_synced_fails() -> None:
    """Every partition must be synced with proof: one failed partition among synced ones is a FAIL, not a COMPLETE."""
    (group,) = _sync("synced").groups
    failed = replace(group.partitions[0], partition=1, outcome="not_proven")
    both = replace(_sync("synced"), groups=(replace(group, partitions=(group.partitions[0], failed)),))
    start, end = (json.loads(Serde.to_json(e)) for e in group_sync_events(both, "S:1", "T:2", STARTED))
    validate_event(end)
    assert (start["eventType"], end["eventType"]) == ("START", "FAIL")
    facet = end["run"]["facets"]["kafkaMigrationPositions"]
    assert (facet["outcome"], facet["message"]) == ("failed", "1 partition(s) not synced")
    assert [p["outcome"] for p in facet["groups"][0]["partitions"]] == ["synced", "not_proven"]
    assert end["run"]["facets"]["errorMessage"]["message"] == "1 partition(s) not synced"


def test_run_end_of_an_up_to_date_run_completes(tmp_path: Path) -> None:
    ledger = Ledger.open(f"sqlite:///{tmp_path / 'ledger.db'}")
    p = plan("run-4", 100, 100, 100)
    ledger.start_run(p, trigger="cli")
    files = close_run(ledger, RunEvidence(p), None, tmp_path / "reports", emit.OFF)
    event = json.loads(Serde.to_json(run_end(SignoffReport.read(files.json), files.sha256)))
    validate_event(event)
    assert event["eventType"] == "COMPLETE" and event["run"]["facets"]["kafkaMigration"]["status"] == "up_to_date"


# --- every event in full: what a lineage backend stores, field by field ------------------------------------------


def bare(value: Any) -> Any:
    """An event as JSON without the facets' _schemaURL (the OpenLineage client's, checked by validate_event)."""
    if isinstance(value, dict):
        return {k: bare(v) for k, v in value.items() if k != "_schemaURL"}
    if isinstance(value, list):
        return [bare(v) for v in value]
    return value


def event(e: Any) -> dict[str, Any]:
    found = json.loads(Serde.to_json(e))
    validate_event(found)
    return bare(found)


def job(kind: str, name: str) -> dict[str, Any]:
    job_type = {"_producer": PRODUCER, "integration": "KAFKA_MIGRATION", "jobType": kind, "processingType": "BATCH"}
    return {"facets": {"jobType": job_type}, "name": name, "namespace": "ns"}


def dataset(namespace: str, name: str, facets: dict[str, Any] | None = None, output: bool = False) -> dict[str, Any]:
    return {
        "facets": {},
        ("outputFacets" if output else "inputFacets"): facets or {},
        "name": name,
        "namespace": namespace,
    }


CLUSTERS = {
    "source": {"bootstrap": "src:9092", "clusterId": "src-id"},
    "target": {"bootstrap": "tgt:9092", "clusterId": "tgt-id"},
}
SHA = "sha256:" + "0f" * 32
RUN_JOB = job("MIGRATION", "kafka-migrate.run[src:9092->tgt:9092]")
SOURCE_TOPICS = [dataset("kafka://src:9092", "audit"), dataset("kafka://src:9092", "orders")]


def test_a_runs_start_in_full() -> None:
    plan_ = migration_plan(topic_plan("orders", (5,), "copy.orders"), topic_plan("audit", (0,)), run_id="run-7")
    assert event(run_start(plan_, "ns", STARTED)) == {
        "eventTime": STARTED,
        "eventType": "START",
        "inputs": SOURCE_TOPICS,
        "job": RUN_JOB,
        "outputs": [
            dataset("kafka://tgt:9092", "audit", output=True),
            dataset("kafka://tgt:9092", "copy.orders", output=True),
        ],
        "producer": PRODUCER,
        "run": {
            "facets": {
                "kafkaMigration": {
                    "_producer": PRODUCER,
                    "runId": "run-7",
                    "status": "running",
                    "verdict": "RUNNING",
                    **CLUSTERS,
                }
            },
            "runId": run_uuid("run", "run-7"),
        },
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
    }


PARTITION = {
    "partition": 0,
    "status": "verified",
    "source_start": 0,
    "source_end": 5,
    "target_start": 0,
    "target_end": 5,
    "copied_records": 5,
    "source_records": 5,
    "target_records": 5,
    "source_checksum": "aa",
    "target_checksum": "aa",
    "first_difference": None,
}


def report(status: str, verdict: str, message: str = "") -> dict[str, Any]:
    """A sign-off report's content as run_end reads it: a topic copied, one the run did not create."""
    return {
        "verdict": verdict,
        "scope": {
            "source": {"cluster_id": "src-id", "bootstrap": "src:9092"},
            "target": {"cluster_id": "tgt-id", "bootstrap": "tgt:9092"},
        },
        "run": {"run_id": "run-7", "status": status, "message": message},
        "totals": {
            "topics": 2,
            "partitions": 2,
            "records_copied": 5,
            "records_verified": 4,
            "partitions_verified": 1,
            "partitions_not_verified": 1,
        },
        "topics": [
            {
                "source_topic": "orders",
                "target_topic": "copy.orders",
                "verdict": "verified",
                "records_copied": 5,
                "records_verified": 5,
                "bytes_copied": 50,
                "partition_details": [PARTITION, {**PARTITION, "partition": 1, "first_difference": "value differs"}],
            },
            {
                "source_topic": "audit",
                "target_topic": None,
                "verdict": "skipped",
                "records_copied": 0,
                "records_verified": 0,
                "bytes_copied": 0,
                "partition_details": [],
            },
        ],
    }


def typed(content: dict[str, Any]) -> SignoffReport:
    return SignoffReport.from_content(content)


def test_a_runs_end_in_full() -> None:
    written = {"rowCount": 5, "size": 50, "_producer": PRODUCER}
    partition = {
        "copiedRecords": 5,
        "partition": 0,
        "sourceChecksum": "aa",
        "sourceEnd": 5,
        "sourceRecords": 5,
        "sourceStart": 0,
        "status": "verified",
        "targetChecksum": "aa",
        "targetEnd": 5,
        "targetRecords": 5,
        "targetStart": 0,
    }
    assert event(run_end(typed(report("differences", "DIFFERENCES")), SHA, "ns", "2026-11-27T11:00:00+00:00")) == {
        "eventTime": "2026-11-27T11:00:00+00:00",
        "eventType": "FAIL",
        "inputs": SOURCE_TOPICS,
        "job": RUN_JOB,
        "outputs": [dataset("kafka://tgt:9092", "copy.orders", {"outputStatistics": written}, output=True)],
        "producer": PRODUCER,
        "run": {
            "facets": {
                "errorMessage": {
                    "_producer": PRODUCER,
                    "message": "the run ended DIFFERENCES",
                    "programmingLanguage": "python",
                },
                "kafkaMigration": {
                    "_producer": PRODUCER,
                    "reportSha256": SHA,
                    "runId": "run-7",
                    "status": "differences",
                    "verdict": "DIFFERENCES",
                    **CLUSTERS,
                    "topics": [
                        {
                            "partitions": [
                                partition,
                                {**partition, "partition": 1, "firstDifference": "value differs"},
                            ],
                            "recordsCopied": 5,
                            "recordsVerified": 5,
                            "sourceTopic": "orders",
                            "targetTopic": "copy.orders",
                            "verdict": "verified",
                        },
                        {
                            "partitions": [],
                            "recordsCopied": 0,
                            "recordsVerified": 0,
                            "sourceTopic": "audit",
                            "verdict": "skipped",
                        },
                    ],
                    "totals": {
                        "partitions": 2,
                        "partitionsNotVerified": 1,
                        "partitionsVerified": 1,
                        "recordsCopied": 5,
                        "recordsVerified": 4,
                        "topics": 2,
                    },
                },
            },
            "runId": run_uuid("run", "run-7"),
        },
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
    }


def test_a_run_fails_with_the_error_it_broke_off_with_else_its_message() -> None:
    def failed(status: str, message: str, error: str | None) -> tuple[str, str | None, str | None]:
        e = event(run_end(typed(report(status, "VERIFIED", message)), None, error=error))
        facets = e["run"]["facets"]
        error_facet = facets.get("errorMessage", {}).get("message")
        return e["eventType"], error_facet, facets["kafkaMigration"].get("message")

    assert failed("verified", "", None) == ("COMPLETE", None, None)
    assert failed("verified", "", "spark-submit exited 1") == ("FAIL", "spark-submit exited 1", None)
    assert failed("failed", "copy broke off", "spark-submit exited 1") == (
        "FAIL",
        "spark-submit exited 1",
        "copy broke off",
    )
    assert failed("failed", "copy broke off", None) == ("FAIL", "copy broke off", "copy broke off")


def test_only_topics_copied_and_verified_by_a_verified_run_are_vouched_for() -> None:
    verified = report("verified", "VERIFIED")
    verified["topics"][1] = {**verified["topics"][1], "verdict": "up_to_date", "target_topic": "audit"}
    assert verified_topics(typed(verified)) == ["copy.orders"]
    assert verified_topics(typed(report("differences", "DIFFERENCES"))) == []


def partition_sync(
    group: str, topic: str, partition: int, outcome: str, target: str | None = "copy.orders"
) -> PartitionSync:
    translated = target is not None
    return PartitionSync(
        group, topic, partition, 40 + partition, None, 100, target, 40 + partition if translated else None, None,
        "within" if translated else None, "run-1" if translated else None, "write", outcome, None,
        "same_record" if outcome == "synced" else None,
    )  # fmt: skip


def test_a_group_sync_in_full_groups_sorted_and_what_failed_counted() -> None:
    fraud = (partition_sync("fraud", "orders", 1, "synced"), partition_sync("fraud", "orders", 0, "not_proven"))
    billing = (partition_sync("billing", "audit", 0, "not_translatable", None),)
    groups = (
        GroupSync("fraud", "Empty", False, "Empty", False, fraud),
        GroupSync("billing", "Empty", False, "Empty", False, billing),
    )
    start, end = (
        event(e)
        for e in group_sync_events(
            GroupSyncResult("sync-3", "run-1", "src", "tgt", False, False, groups), "S:1", "T:2", STARTED, "ns"
        )
    )
    parent = {
        "_producer": PRODUCER,
        "job": {"facets": {}, "name": "kafka-migrate.run[s:1->t:2]", "namespace": "ns"},
        "run": {"facets": {}, "runId": run_uuid("run", "run-1")},
    }
    common = {
        "inputs": [dataset("kafka://s:1", "audit"), dataset("kafka://s:1", "orders")],
        "job": job("GROUP_SYNC", "kafka-migrate.group_sync[s:1->t:2]"),
        "outputs": [dataset("kafka://t:2", "copy.orders", output=True)],
        "producer": PRODUCER,
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
    }
    run_id = run_uuid("group_sync", "sync-3")
    assert start == {
        **common,
        "eventTime": STARTED,
        "eventType": "START",
        "run": {"facets": {"parent": parent}, "runId": run_id},
    }
    translated = {"targetTopic": "copy.orders", "translatedBy": "run-1", "translation": "within"}
    positions = {
        "_producer": PRODUCER,
        "groups": [
            {
                "groupId": "billing",
                "partitions": [
                    {"outcome": "not_translatable", "partition": 0, "sourceOffset": 40, "sourceTopic": "audit"}
                ],
            },
            {
                "groupId": "fraud",
                "partitions": [
                    {
                        "outcome": "not_proven",
                        "partition": 0,
                        "sourceOffset": 40,
                        "sourceTopic": "orders",
                        "targetOffset": 40,
                        **translated,
                    },
                    {
                        "outcome": "synced",
                        "partition": 1,
                        "proof": "same_record",
                        "sourceOffset": 41,
                        "sourceTopic": "orders",
                        "targetOffset": 41,
                        **translated,
                    },
                ],
            },
        ],
        "id": "sync-3",
        "kind": "group_sync",
        "message": "2 partition(s) not synced",
        "outcome": "failed",
        "runId": "run-1",
    }
    error = {"_producer": PRODUCER, "message": "2 partition(s) not synced", "programmingLanguage": "python"}
    assert end == {
        **common,
        "eventTime": end["eventTime"],
        "eventType": "FAIL",
        "run": {
            "facets": {"errorMessage": error, "kafkaMigrationPositions": positions, "parent": parent},
            "runId": run_id,
        },
    }
    assert end["eventTime"].endswith("+00:00") and end["eventTime"] >= STARTED  # sent when it ended, in UTC
    ok = (partition_sync("fraud", "orders", 1, "synced"),)
    result = GroupSyncResult(
        "sync-4", None, "src", "tgt", False, False, (GroupSync("fraud", "Empty", False, "Empty", False, ok),)
    )
    _, done = (event(e) for e in group_sync_events(result, "S:1", "T:2", STARTED))
    facets = done["run"]["facets"]
    assert (done["eventType"], sorted(facets)) == ("COMPLETE", ["kafkaMigrationPositions"])  # no parent run
    assert (facets["kafkaMigrationPositions"]["outcome"], facets["kafkaMigrationPositions"].get("message")) == (
        "completed",
        None,
    )


def test_a_cutover_and_a_failback_in_full() -> None:
    ends = [{"partition": 0, "source_end": 9, "target_end": 7}]
    topics = [{"source_topic": "orders", "target_topic": "copy.orders", "partitions": ends}]
    rows = [
        {"group_id": "fraud", "source_topic": "orders", "partition": 0, "source_offset": 9, "outcome": "synced"},
        {"group_id": "billing", "source_topic": "orders", "partition": 0, "source_offset": 5, "outcome": "synced"},
    ]
    groups = [
        {
            "groupId": "billing",
            "partitions": [{"outcome": "synced", "partition": 0, "sourceOffset": 5, "sourceTopic": "orders"}],
        },
        {
            "groupId": "fraud",
            "partitions": [{"outcome": "synced", "partition": 0, "sourceOffset": 9, "sourceTopic": "orders"}],
        },
    ]
    for kind, source, target, end in (
        ("cutover", "orders", "copy.orders", {"partition": 0, "sourceEnd": 9, "targetEnd": 7}),
        ("failback", "copy.orders", "orders", {"partition": 0, "sourceEnd": 7, "targetEnd": 9}),
    ):
        start, done = (
            event(e)
            for e in cutover_events(
                CutoverLineage(kind, "c1", "run-9", "S:1", "T:2", topics, False, None, STARTED), rows, "ns"
            )
        )
        common = {
            "inputs": [dataset("kafka://s:1", source)],
            "job": job(kind.upper(), f"kafka-migrate.{kind}[s:1->t:2]"),
            "outputs": [dataset("kafka://t:2", target, output=True)],
            "producer": PRODUCER,
            "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        }
        run_id = run_uuid(kind, "c1:run-9")
        assert start == {**common, "eventTime": STARTED, "eventType": "START", "run": {"facets": {}, "runId": run_id}}
        positions = {
            "_producer": PRODUCER,
            "groups": groups,
            "id": "c1",
            "kind": kind,
            "outcome": "failed",
            "runId": "run-9",
            "topics": [{"partitions": [end], "sourceTopic": source, "targetTopic": target}],
        }
        error = {"_producer": PRODUCER, "message": f"{kind} failed", "programmingLanguage": "python"}
        assert done == {
            **common,
            "eventTime": done["eventTime"],
            "eventType": "FAIL",
            "run": {"facets": {"errorMessage": error, "kafkaMigrationPositions": positions}, "runId": run_id},
        }
    (_, done) = cutover_events(CutoverLineage("cutover", "c2", None, "S:1", "T:2", topics, True, "moved", STARTED), [])
    positions = event(done)["run"]["facets"]["kafkaMigrationPositions"]
    assert (positions["outcome"], positions["message"]) == ("completed", "moved")
    assert event(done)["eventType"] == "COMPLETE"


def test_a_topic_copied_under_two_names_or_not_created_is_one_input_and_its_outputs() -> None:
    inputs, outputs = datasets("S:1", "T:2", [("b", None), ("a", "x"), ("a", None), ("a", "x")])
    assert [d.name for d in inputs] == ["a", "b"] and [d.name for d in outputs] == ["x"]


def test_a_run_that_moved_schemas_carries_its_subjects_and_id_map() -> None:
    section = {
        "mode": "translate",
        "source_registry": "http://src-registry:8081",
        "target_registry": "http://migrator:***@tgt-registry:8081",
        "versions": [
            {"source_subject": "shop.Address", "target_subject": "shop.Address", "version": 1, "target_version": 1,
             "format": "AVRO", "source_id": 4, "target_id": 1, "action": "registered", "fingerprint": "sha256:ab"},
            {"source_subject": "orders-value", "target_subject": "copy.orders-value", "version": 1,
             "target_version": None, "format": "JSON", "source_id": 9, "target_id": None, "action": "to_register",
             "fingerprint": None},
        ],
        "id_map": [{"source": 4, "target": 1, "format": "AVRO"}],
        "partitions": [],
        "totals": {"keys": {"translated": 3}, "values": {"translated": 5}},
    }  # fmt: skip
    found = event(run_end(typed({**report("verified", "VERIFIED"), "schemas": section}), SHA))["run"]["facets"]
    assert found["kafkaMigration"]["schemas"] == {
        "mode": "translate",
        "sourceRegistry": "http://src-registry:8081",
        "targetRegistry": "http://migrator:***@tgt-registry:8081",
        "versions": [
            {"sourceSubject": "shop.Address", "targetSubject": "shop.Address", "version": 1, "format": "AVRO",
             "sourceId": 4, "targetId": 1, "action": "registered", "fingerprint": "sha256:ab"},
            {"sourceSubject": "orders-value", "targetSubject": "copy.orders-value", "version": 1, "format": "JSON",
             "sourceId": 9, "action": "to_register"},
        ],
        "idMap": [{"source": 4, "target": 1, "format": "AVRO"}],
        "keysTranslated": 3,
        "valuesTranslated": 5,
    }  # fmt: skip
    assert (
        "schemas" not in event(run_end(typed(report("verified", "VERIFIED")), SHA))["run"]["facets"]["kafkaMigration"]
    )
