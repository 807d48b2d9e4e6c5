"""The census's Spark job without Spark: its tasks balanced by offsets, their censuses merged, the answer written
(or the task's error), and the line the launcher waits for. The real job: tests/integration/test_schema_ids.py."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafka_migration.model.census import Census, Sighting
from kafka_migration.model.config import ClusterPair, Endpoint
from kafka_migration.model.plan import PartitionSlice
from kafka_migration.model.schemas import RecordPart
from kafka_migration.run.census import read_answer
from kafka_migration.spark import census_jobs
from kafka_migration.spark.census_jobs import CENSUS_WRITTEN, answer_census, balanced, census_written, run_census
from tests.unit.factories import migration_plan, topic_plan

CLUSTERS = ClusterPair(
    Endpoint("source", {"bootstrap.servers": "s:9092"}), Endpoint("target", {"bootstrap.servers": "t"})
)


class Context:
    """What ``run_census`` asks of a SparkContext; its tasks run here, one after another."""

    def __init__(self, slots: int = 2, fail: Exception | None = None) -> None:
        self.defaultParallelism = slots
        self.fail = fail
        self.tasks: list[Any] = []
        self.groups: list[str] = []

    def setJobGroup(self, group: str, description: str) -> None:
        self.groups.append(group)

    def parallelize(self, tasks: list[Any], count: int) -> Context:
        assert count == len(tasks)
        self.tasks = tasks
        return self

    def map(self, fn: Callable[[Any], Any]) -> Context:
        self.fn = fn
        return self

    def collect(self) -> list[Any]:
        if self.fail is not None:
            raise self.fail
        return [self.fn(task) for task in self.tasks]


@given(st.lists(st.integers(0, 1000), min_size=1, max_size=40), st.integers(1, 12))
def test_every_slice_is_read_once_in_at_most_count_tasks_the_loads_balanced(spans: list[int], count: int) -> None:
    slices = [PartitionSlice("t", "t", p, 0, span, 0) for p, span in enumerate(spans)]
    groups = balanced(slices, count)
    assert sorted(s.partition for g in groups for s in g) == list(range(len(spans)))
    assert 1 <= len(groups) <= count and all(groups)
    loads = [sum(s.end - s.start for s in g) for g in groups]
    assert max(loads) - min(loads) <= max(spans)  # greedy: no group heavier than the lightest by more than a slice


def test_the_census_job_merges_what_its_tasks_found(monkeypatch: pytest.MonkeyPatch) -> None:
    def task(slices: list[PartitionSlice], source: Endpoint) -> dict[str, Any]:
        assert source == CLUSTERS.source
        found = [Sighting(s.source_topic, s.partition, RecordPart.VALUE, 7, s.start, s.end - s.start) for s in slices]
        return Census(tuple(found), sum(s.end for s in slices), sum(s.end for s in slices)).to_dict()

    monkeypatch.setattr(census_jobs, "census_task", task)
    sc = Context(slots=1)
    found = run_census(sc, migration_plan(topic_plan("a", (5, 0, 3)), topic_plan("b", (4,))), CLUSTERS)
    assert sc.groups == ["census"] and len(sc.tasks) == 3  # three ranges to read (one empty), four tasks a slot
    assert found.records == 12 and found.ids() == {7}
    assert [(s.topic, s.partition, s.records) for s in found.sightings] == [("a", 0, 5), ("a", 2, 3), ("b", 0, 4)]
    empty = Context()
    assert run_census(empty, migration_plan(topic_plan("a", (0,))), CLUSTERS) == Census() and empty.groups == []


def test_the_answer_is_written_then_said_also_when_the_census_failed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    request = tmp_path / "census-plan.json"
    migration_plan(topic_plan("a", (5,))).write(request)
    failing = Context(fail=RuntimeError("Py4J...\nkafka_migration.exceptions.ClusterTimeoutError: source silent\n"))
    with caplog.at_level(logging.INFO, logger="kafka_migration.spark"):
        answer_census(failing, request, tmp_path / "census.json", CLUSTERS)
    assert caplog.messages[-1] == CENSUS_WRITTEN
    with pytest.raises(Exception, match="census of the source records failed: ClusterTimeoutError: source silent"):
        read_answer(tmp_path / "census.json")
    assert census_written(f"2026-12-01 10:00:00,000 INFO kafka_migration.spark: {CENSUS_WRITTEN}\n")
    assert not census_written("INFO kafka_migration.spark: census written by someone else")
