"""kafka_migration.model.results: step outcomes and their JSON round trip."""

from __future__ import annotations

import json
from pathlib import Path

from kafka_migration.model.results import FAILED, MISMATCH, OK, StepResults, TopicOutcome, merge


def copy_outcome(topic: str = "orders", status: str = OK, records: tuple[int, ...] = (3, 4)) -> TopicOutcome:
    return TopicOutcome(
        source_topic=topic,
        target_topic=f"eu.{topic}",
        status=status,
        seconds=1.5,
        partitions=[{"partition": p, "records": r, "bytes": r * 100} for p, r in enumerate(records)],
        error=None if status == OK else "partition 0: boom",
    )


def verify_outcome(topic: str = "orders", status: str = OK) -> TopicOutcome:
    return TopicOutcome(
        source_topic=topic,
        target_topic=f"eu.{topic}",
        status=status,
        seconds=0.5,
        partitions=[
            {"partition": 0, "source_records": 3, "target_records": 3, "match": True},
            {"partition": 1, "source_records": 4, "target_records": 5, "match": status == OK},
        ],
    )


class TestTopicOutcome:
    def test_copy_records_and_bytes(self) -> None:
        outcome = copy_outcome(records=(3, 4))
        assert outcome.records == 7
        assert outcome.bytes == 700

    def test_verify_records_count_source_records(self) -> None:
        assert verify_outcome().records == 7
        assert verify_outcome().bytes == 0

    def test_no_partitions(self) -> None:
        outcome = TopicOutcome("a", "a", FAILED, 0.0, error="task failed")
        assert (outcome.records, outcome.bytes) == (0, 0)


class TestStepResults:
    def _results(self) -> StepResults:
        return StepResults(
            step="copy",
            run_id="run-1",
            jobs=[0, 2],
            topics={
                "orders": copy_outcome("orders"),
                "payments": copy_outcome("payments", FAILED),
                "empty": TopicOutcome("empty", "empty", OK, 0.0),
            },
            started_at="2026-11-22T21:00:00+00:00",
            seconds=12.25,
        )

    def test_write_read_round_trip(self, tmp_path: Path) -> None:
        results = self._results()
        path = tmp_path / "run" / "copy-results.json"
        results.write(path)
        restored = StepResults.read(path)
        assert restored == results
        assert isinstance(restored.topics["orders"], TopicOutcome)
        assert restored.topics["payments"].error == "partition 0: boom"
        assert not path.with_suffix(".tmp").exists()

    def test_written_file_is_plain_json(self, tmp_path: Path) -> None:
        path = tmp_path / "results.json"
        self._results().write(path)
        data = json.loads(path.read_text())
        assert data["step"] == "copy" and data["jobs"] == [0, 2]
        assert data["topics"]["orders"]["partitions"][1] == {"partition": 1, "records": 4, "bytes": 400}

    def test_ok_only_when_every_topic_ok(self) -> None:
        results = self._results()
        assert not results.ok
        results.topics["payments"] = copy_outcome("payments")
        assert results.ok
        results.topics["orders"] = verify_outcome("orders", MISMATCH)
        assert not results.ok

    def test_no_topics_is_ok(self) -> None:
        assert StepResults("verify", "r", [], {}, "now", 0.0).ok


def test_merge_later_results_win() -> None:
    first = StepResults("copy", "r", [0], {"a": copy_outcome("a", FAILED), "b": copy_outcome("b")}, "t", 1.0)
    retry = StepResults("copy", "r", [0], {"a": copy_outcome("a")}, "t", 1.0)
    merged = merge([first, retry])
    assert set(merged) == {"a", "b"}
    assert merged["a"].status == OK


def test_run_timings_parts_from_stamps() -> None:
    from kafka_migration.model.timings import RunTimings, run_timings, task_intervals

    rows = [{"started": 12.0, "ended": 15.0}, {"started": 13.0, "ended": 16.0}, {"seconds": 1.0}]
    copy = task_intervals(rows)
    verify = [(15.0, 18.0), (16.0, 19.5)]
    t = run_timings(10.0, 11.0, 12.0, copy, verify, 20.5)
    assert t == RunTimings(wall=10.5, plan=1.0, startup=1.0, copy=4.0, verify=4.5, overlap=1.0, bookkeeping=1.0)
    assert RunTimings.from_dict(t.to_dict()) == t
    assert RunTimings.from_dict({}) is None
    # Spark ready before planning ended: the start-up was hidden behind planning.
    assert run_timings(10.0, 11.0, 10.5, [], [], 11.5).startup == 0.0


def test_task_seconds_sum_partitions_of_a_shared_job() -> None:
    from kafka_migration.model.results import TopicOutcome

    outcome = TopicOutcome("a", "a", "ok", 9.0, partitions=[{"seconds": 0.25}, {"seconds": 0.5}], job_topics=3)
    assert outcome.task_seconds == 0.75 and outcome.job_topics == 3
