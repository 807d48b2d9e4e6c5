"""model/report: a sign-off report as its readers get it, read from the report's own content."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kafka_migration.ledger import Ledger
from kafka_migration.model.report import ReportCluster, ReportPartition, SignoffReport
from kafka_migration.reports.signoff import build_report, write_report
from tests.unit.ledger.test_ledger import outcomes, plan

DATA = Path(__file__).parents[1] / "lineage" / "data"


def test_a_report_built_from_the_ledger_reads_back_field_for_field(tmp_path: Path) -> None:
    ledger = Ledger.open(f"sqlite:///{tmp_path / 'ledger.db'}")
    p = plan("run-1", 0, 100, 0)
    ledger.start_run(p, trigger="cli")
    ledger.record_topic(p, p.topics[0], *outcomes(p, {0: True, 1: False}))
    ledger.finish_run("run-1", "mismatch", 200, "1 partition differs")
    content = build_report(ledger.run("run-1"), ledger.run_segments("run-1"))  # type: ignore[arg-type]
    report = SignoffReport.read(write_report(content, tmp_path / "reports").json)
    assert report == SignoffReport.from_content(content)
    assert (report.run.run_id, report.run.status, report.run.message) == ("run-1", "mismatch", "1 partition differs")
    assert report.verdict == "NOT VERIFIED" and not report.scope.dry_run
    assert report.scope.source == ReportCluster("src-cluster", content["scope"]["source"]["bootstrap"])
    assert report.totals.records_copied == content["totals"]["records_copied"] == 200
    (topic,) = report.topics
    assert (topic.source_topic, topic.target_topic, topic.verdict) == ("orders", "copy.orders", "mismatch")
    first, second = topic.partitions
    details = content["topics"][0]["partition_details"]
    assert first == ReportPartition(
        **{name: details[0][name] for name in ReportPartition.__dataclass_fields__}  # every field, as written
    )
    assert (second.status, second.first_difference) == ("mismatch", details[1]["first_difference"])
    assert report.schemas is None  # a run that moved no schemas


def test_the_schema_section_and_a_topic_without_a_target() -> None:
    report = SignoffReport.read(DATA / "report.json")
    assert [t.target_topic for t in report.topics] == [None, "copy.orders", "copy.payments"]
    assert report.schemas is not None
    assert (report.schemas.mode, report.schemas.keys_translated, report.schemas.values_translated) == (
        "translate",
        3,
        190,
    )
    present = report.schemas.versions[1]
    assert (present.source_subject, present.target_id, present.action) == ("orders-key", None, "present")
    assert report.schemas.id_map[0] == {"source": 1, "target": 101, "format": "AVRO"}


def test_a_key_an_older_report_lacks_reads_as_none_and_a_missing_section_is_refused() -> None:
    content = json.loads((DATA / "report-verified.json").read_text())
    del content["run"]["message"]
    del content["topics"][0]["partition_details"][0]["first_difference"]
    report = SignoffReport.from_content(content)
    assert report.run.message is None and report.topics[0].partitions[0].first_difference is None
    del content["totals"]
    with pytest.raises(KeyError, match="totals"):
        SignoffReport.from_content(content)
