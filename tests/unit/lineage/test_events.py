"""A run's events as run/evidence.py sends them: START, then COMPLETE or FAIL built from report.json, each event
and facet valid against the OpenLineage schemas, the datasets, counts and checksums those of the report."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from openlineage.client.serde import Serde

from kafka_migration.ledger import Ledger
from kafka_migration.lineage import emit
from kafka_migration.lineage.events import cutover_events, group_sync_events, run_end, verified_topics
from kafka_migration.model.groups import GroupSync, GroupSyncResult, PartitionSync
from kafka_migration.model.results import MISMATCH
from kafka_migration.run.evidence import RunEvidence, close_run, record_failure, run_opened
from tests.unit.ledger.test_ledger import outcomes, plan
from tests.unit.lineage.schemas import validate_event

STARTED = "2026-11-27T10:00:00+00:00"


@pytest.fixture
def collected() -> Iterator[emit.Collector]:
    collector = emit.Collector()
    emit.route(collector)
    yield collector
    emit.route(None)


def as_dicts(collector: emit.Collector) -> list[dict[str, Any]]:
    events = [json.loads(Serde.to_json(e)) for e in collector.events]
    for event in events:
        validate_event(event)
    return events


def _run(tmp_path: Path, match: dict[int, bool]) -> tuple[Ledger, Any]:
    ledger = Ledger.open(f"sqlite:///{tmp_path / 'ledger.db'}")
    p = plan("run-1", 0, 100, 0)
    ledger.start_run(p, trigger="cli")
    run_opened(p)
    copy, verify = outcomes(p, match)
    if not all(match.values()):  # as verification reports a topic with a differing partition
        verify = replace(verify, status=MISMATCH)
    evidence = RunEvidence(p, {"orders": copy}, {"orders": verify})
    ledger.record_topics(p, [(p.topics[0], copy, verify, None)])
    return ledger, evidence


def test_a_verified_run_starts_and_completes_with_the_reports_evidence(tmp_path: Path, collected) -> None:  # type: ignore[no-untyped-def]
    ledger, evidence = _run(tmp_path, {0: True, 1: True})
    files = close_run(ledger, evidence, None, tmp_path / "reports")
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
    assert verified_topics(report) == ["copy.orders"]


def test_a_run_with_differences_fails_and_names_no_verified_topic(tmp_path: Path, collected) -> None:  # type: ignore[no-untyped-def]
    ledger, evidence = _run(tmp_path, {0: True, 1: False})
    files = close_run(ledger, evidence, None, tmp_path / "reports")
    _start, fail = as_dicts(collected)
    assert fail["eventType"] == "FAIL"
    facet = fail["run"]["facets"]["kafkaMigration"]
    assert facet["status"] == "mismatch" and facet["verdict"] == "NOT VERIFIED"
    assert [p["status"] for p in facet["topics"][0]["partitions"]] == ["verified", "mismatch"]
    assert facet["topics"][0]["partitions"][1]["firstDifference"] == "value differs"
    assert "errorMessage" in fail["run"]["facets"]
    assert verified_topics(json.loads(files.json.read_bytes())) == []


def test_a_failed_run_fails_with_its_error(tmp_path: Path, collected) -> None:  # type: ignore[no-untyped-def]
    ledger = Ledger.open(f"sqlite:///{tmp_path / 'ledger.db'}")
    p = plan("run-2", 0, 100, 0)
    ledger.start_run(p, trigger="cli")
    run_opened(p)
    record_failure(ledger, "run-2", "copy of orders[0] broke off", tmp_path / "reports")
    start, fail = as_dicts(collected)
    assert (start["eventType"], fail["eventType"]) == ("START", "FAIL")
    assert fail["run"]["facets"]["errorMessage"]["message"] == "copy of orders[0] broke off"
    assert fail["run"]["facets"]["kafkaMigration"]["status"] == "failed"
    assert [d["name"] for d in fail["outputs"]] == ["copy.orders"]


def test_a_dry_run_sends_nothing(collected) -> None:  # type: ignore[no-untyped-def]
    p = plan("run-3", 0, 100, 0)
    run_opened(type(p)(**{**vars(p), "options": {"dry_run": True}}))
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
            kind, "c1", "run-9", "S:1", "T:2", topics, rows, True, "ok", "2026-11-27T10:00:00+00:00"
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
    files = close_run(ledger, RunEvidence(p), None, tmp_path / "reports")
    event = json.loads(Serde.to_json(run_end(json.loads(files.json.read_bytes()), files.sha256)))
    validate_event(event)
    assert event["eventType"] == "COMPLETE" and event["run"]["facets"]["kafkaMigration"]["status"] == "up_to_date"
