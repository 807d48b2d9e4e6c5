"""A run and its segments as the ledger gives them (model/recorded.py): from a row's columns, and back."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime

import pytest

from kafka_migration.model.recorded import RecordedRun, RecordedSegment
from kafka_migration.model.timings import RunTimings

STARTED = datetime(2026, 11, 20, 10, 0, tzinfo=UTC)
ENDED = datetime(2026, 11, 20, 10, 5, tzinfo=UTC)


def run_row(**changes: object) -> dict[str, object]:
    """Every column of km_runs, as the ledger reads them."""
    row: dict[str, object] = {
        "run_id": "run-1",
        "trigger": "airflow",
        "dag_id": "kafka_migration",
        "dag_run_id": "manual_1",
        "params": {"include": "orders"},
        "source_cluster_id": "src-cluster",
        "source_bootstrap": "s:9092",
        "target_cluster_id": "tgt-cluster",
        "target_bootstrap": "t:9092",
        "started_at": STARTED,
        "ended_at": ENDED,
        "status": "verified",
        "topics": 1,
        "records": 200,
        "warnings": ["orders: a warning"],
        "report_sha256": "sha256:ab",
        "message": None,
        "plan": {"run_id": "run-1", "topics": []},
        "timings": {"wall": 8.2, "plan": 0.8, "copy": 4.0},
    }
    row.update(changes)
    return row


def segment_row(**changes: object) -> dict[str, object]:
    """Every column of km_segments, as the ledger reads them."""
    row: dict[str, object] = {
        "id": 7,
        "run_id": "run-1",
        "source_cluster_id": "src-cluster",
        "source_topic": "orders",
        "partition": 1,
        "target_cluster_id": "tgt-cluster",
        "target_topic": "copy.orders",
        "source_start": 100,
        "source_end": 120,
        "target_start": 90,
        "target_end": 110,
        "expired_offsets": 0,
        "copied_records": 20,
        "resumed_records": 0,
        "source_records": 20,
        "target_records": 20,
        "source_checksum": "sha256:a",
        "target_checksum": "sha256:b",
        "status": "mismatch",
        "first_difference": "value differs",
        "first_source_offset": 105,
        "first_target_offset": 95,
        "copy_seconds": 1.5,
        "verify_seconds": 0.5,
        "error": None,
        "copied_bytes": 2048,
        "job_topics": 2,
        "schema_counts": {"topic": "orders", "partition": 1, "keys": {"translated": 3}, "values": {}},
    }
    row.update(changes)
    return row


def test_a_run_reads_every_column_and_gives_them_back() -> None:
    run = RecordedRun.from_row(run_row())
    assert (run.run_id, run.trigger, run.dag_id, run.dag_run_id) == ("run-1", "airflow", "kafka_migration", "manual_1")
    assert (run.source_cluster_id, run.source_bootstrap, run.target_cluster_id, run.target_bootstrap) == (
        "src-cluster",
        "s:9092",
        "tgt-cluster",
        "t:9092",
    )
    assert (run.started_at, run.ended_at, run.status, run.topics, run.records) == (STARTED, ENDED, "verified", 1, 200)
    assert run.timings == RunTimings(wall=8.2, plan=0.8, copy=4.0) and run.wall_seconds == 8.2
    assert run.params == {"include": "orders"} and run.warnings == ("orders: a warning",)
    assert run.plan == {"run_id": "run-1", "topics": []} and run.report_sha256 == "sha256:ab"
    # Back to the row's columns: the same keys, the timings as RunTimings.to_dict stores them.
    back = run.to_dict()
    assert set(back) == set(run_row())
    assert back == run_row(timings=RunTimings(wall=8.2, plan=0.8, copy=4.0).to_dict())
    assert RecordedRun.from_row(back) == run


def test_a_list_row_without_the_plan_leaves_it_none() -> None:
    listed = {k: v for k, v in run_row().items() if k not in ("params", "warnings", "plan")}
    run = RecordedRun.from_row(listed)
    assert (run.params, run.warnings, run.plan) == (None, None, None)
    assert run.to_dict()["plan"] is None and run.status == "verified"


@pytest.mark.parametrize("stored", [None, {}, {"plan": 1.0}, "not a mapping"])
def test_timings_not_recorded_read_as_none(stored: object) -> None:
    run = RecordedRun.from_row(run_row(timings=stored, ended_at=None, status="running"))
    assert run.timings is None and run.wall_seconds is None
    assert run.to_dict()["timings"] is None


def test_a_run_is_frozen() -> None:
    run = RecordedRun.from_row(run_row())
    with pytest.raises(dataclasses.FrozenInstanceError):
        run.status = "failed"  # type: ignore[misc]


def test_a_segment_reads_every_column_and_gives_them_back() -> None:
    segment = RecordedSegment.from_row(segment_row())
    assert (segment.source_topic, segment.partition, segment.target_topic) == ("orders", 1, "copy.orders")
    assert (segment.source_start, segment.source_end, segment.target_start, segment.target_end) == (100, 120, 90, 110)
    assert (segment.status, segment.first_source_offset, segment.first_target_offset) == ("mismatch", 105, 95)
    assert (segment.copied_bytes, segment.job_topics, segment.copy_seconds) == (2048, 2, 1.5)
    assert segment.planned_offsets == 20
    assert segment.to_dict() == segment_row()
    assert RecordedSegment.from_row(segment.to_dict()) == segment
    with pytest.raises(dataclasses.FrozenInstanceError):
        segment.status = "verified"  # type: ignore[misc]


def test_a_segment_recorded_before_0006_has_no_job_size_and_an_empty_range_plans_nothing() -> None:
    row = {k: v for k, v in segment_row(source_end=100, status="planned").items() if k != "job_topics"}
    segment = RecordedSegment.from_row(row)
    assert segment.job_topics is None and segment.planned_offsets == 0
