"""The events of fixed inputs are the ones the build before the typed report made, field for field.

``data/events.json`` was written by kafka_migration at c355c05 (lineage read report.json by string keys and routed
through module globals then) from ``data/report.json`` and ``data/report-verified.json`` (a run with a difference,
and the same run verified; a topic with no target; a schema section; IPv6 and PROTOCOL:// bootstrap addresses),
a plan, a group sync and a cutover and failback. An end event's time is when it is sent, so it is left out.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from openlineage.client.serde import Serde

from kafka_migration.airflow.lineage import verified_assets
from kafka_migration.groups.rules import GroupSync, GroupSyncResult, PartitionSync
from kafka_migration.lineage.events import (
    cutover_events,
    group_sync_events,
    report_datasets,
    run_end,
    run_start,
    verified_topics,
)
from kafka_migration.lineage.moves import CutoverLineage
from kafka_migration.model.report import SignoffReport
from tests.unit.ledger.test_ledger import plan

DATA = Path(__file__).parent / "data"
GOLDEN = json.loads((DATA / "events.json").read_text())
T = "2026-11-27T11:00:00+00:00"


def as_json(events: Any) -> list[dict[str, Any]]:
    return [json.loads(Serde.to_json(e)) for e in events]


def sent_when_it_ended(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e if e["eventType"] == "START" else {**e, "eventTime": "(sent when it ended)"} for e in events]


def _moves() -> dict[str, list[dict[str, Any]]]:
    part = PartitionSync(
        "billing", "orders", 0, 40, None, 100, "copy.orders", 40, None, "within", "run-1", "write", "synced", None,
        "same_record",
    )  # fmt: skip
    bad = PartitionSync(
        "billing", "orders", 1, 7, "meta", 100, "copy.orders", None, 3, None, None, "none", "not_translatable",
        "no verified copy", None,
    )  # fmt: skip
    group = GroupSync("billing", "Empty", False, "Empty", False, (part, bad))
    sync = GroupSyncResult("run-1__groups", "run-1", "src", "tgt", False, False, (group,))
    ends = [{"partition": 0, "source_end": 9, "target_end": 7}, {"partition": 1, "source_end": 5, "target_end": 5}]
    topics = [{"source_topic": "orders", "target_topic": "copy.orders", "partitions": ends}]
    row = {"group_id": "billing", "source_topic": "orders", "partition": 0, "source_offset": 9}
    rows = [
        {
            **row,
            "target_topic": "copy.orders",
            "target_offset": 7,
            "outcome": "synced",
            "translation": "within",
            "translated_by": "run-1",
            "proof": "same_record",
        }
    ]
    cutover = CutoverLineage("cutover", "c1", "run-9", "S:1", "T:2", topics, True, "ok", T)
    failback = CutoverLineage("failback", "c1", "run-9", "S:1", "T:2", topics, False, None, T)
    return {
        "group_sync": sent_when_it_ended(as_json(group_sync_events(sync, "S:1", "T:2", T, "ns"))),
        "cutover": sent_when_it_ended(as_json(cutover_events(cutover, rows, "ns"))),
        "failback": sent_when_it_ended(as_json(cutover_events(failback, rows, "ns"))),
    }


def _now() -> dict[str, Any]:
    report = SignoffReport.read(DATA / "report.json")
    verified = SignoffReport.read(DATA / "report-verified.json")
    inputs, outputs = report_datasets(report)
    return {
        "run_start": as_json([run_start(plan("run-1", 0, 100, 0), "ns", T)]),
        "run_end_mismatch": as_json([run_end(report, "sha256:00ff", "ns", T)]),
        "run_end_verified": as_json([run_end(verified, "sha256:00ff", "ns", T)]),
        "run_end_error": as_json([run_end(verified, None, "ns", T, error="copy of orders[0] broke off")]),
        "verified_topics": verified_topics(verified),
        "verified_topics_mismatch": verified_topics(report),
        "report_datasets": as_json(inputs) + as_json(outputs),
        **_moves(),
        "verified_assets": [list(a) for a in verified_assets(DATA / "report-verified.json")],
        "verified_assets_mismatch": [list(a) for a in verified_assets(DATA / "report.json")],
    }


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_the_events_are_those_of_the_build_before(name: str) -> None:
    assert _now()[name] == GOLDEN[name]


def test_the_golden_file_covers_what_it_says() -> None:
    """The fixed inputs reach every branch the comparison is meant to hold: both verdicts, an error, a topic
    without a target, the schema section, and a non-trivial bootstrap."""
    (mismatch,) = GOLDEN["run_end_mismatch"]
    (error,) = GOLDEN["run_end_error"]
    facet = mismatch["run"]["facets"]["kafkaMigration"]
    assert mismatch["eventType"] == "FAIL" and GOLDEN["run_end_verified"][0]["eventType"] == "COMPLETE"
    assert error["run"]["facets"]["errorMessage"]["message"] == "copy of orders[0] broke off"
    assert [t.get("targetTopic") for t in facet["topics"]] == [None, "copy.orders", "copy.payments"]
    assert facet["schemas"]["versions"][1] == {
        "action": "present",
        "format": "JSON",
        "sourceId": 2,
        "sourceSubject": "orders-key",
        "targetSubject": "copy.orders-key",
        "version": 2,
    }
    assert facet["target"]["bootstrap"] == "[fe80::1]:19092" and GOLDEN["verified_topics"] == ["copy.payments"]
