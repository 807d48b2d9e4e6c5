"""Hand-built TopicState / ClusterInfo / TopicPlan objects for the unit tests (no broker)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kafka_migration.plan import ClusterInfo, MigrationPlan, PartitionPlan, TopicPlan
from kafka_migration.state import ConfigValue, TopicState

SOURCE = ClusterInfo(role="source", bootstrap="src:9092", cluster_id="src-id", broker_count=3)
TARGET = ClusterInfo(role="target", bootstrap="tgt:9092", cluster_id="tgt-id", broker_count=2)


def topic_state(
    name: str,
    partitions: int = 3,
    *,
    rf: int = 3,
    configs: dict[str, str] | None = None,
    earliest: int | dict[int, int] = 0,
    latest: int | dict[int, int] = 10,
) -> TopicState:
    """A topic whose ``configs`` are all set on the topic itself."""
    return TopicState(
        name=name,
        partitions=partitions,
        replication_factor=rf,
        configs={k: ConfigValue(v, set_on_topic=True) for k, v in (configs or {}).items()},
        earliest=earliest if isinstance(earliest, dict) else dict.fromkeys(range(partitions), earliest),
        latest=latest if isinstance(latest, dict) else dict.fromkeys(range(partitions), latest),
    )


def topic_plan(source_topic: str, spans: tuple[int, ...] = (10,), target_topic: str | None = None) -> TopicPlan:
    """A topic plan with one partition per entry of ``spans`` (offsets [0, span))."""
    return TopicPlan(
        source_topic=source_topic,
        target_topic=target_topic or source_topic,
        partitions=tuple(
            PartitionPlan(partition=p, start=0, end=span, target_start=0, earliest=0, latest=span)
            for p, span in enumerate(spans)
        ),
        replication_factor=1,
        configs={},
        skipped_configs={},
        create=True,
    )


def migration_plan(*topics: TopicPlan, jobs: tuple[tuple[str, ...], ...] = (), run_id: str = "run-1") -> MigrationPlan:
    return MigrationPlan(
        run_id=run_id,
        created_at="2026-11-22T21:00:00+00:00",
        source=SOURCE,
        target=TARGET,
        options={"include": ".*"},
        topics=tuple(topics),
        jobs=jobs,
    )


class FakeContext:
    """Stands in for a SparkContext: records what would be parallelized, returns canned task rows.

    The task function is never called, so nothing talks to Kafka.
    """

    def __init__(
        self,
        rows: list[Any] | None = None,
        fail: Exception | None = None,
        slots: int = 1,
        then: list[Any] | None = None,
    ) -> None:
        self.rows = rows or []
        self.then = then  # the rows of a second job, if any
        self.defaultParallelism = slots
        self.fail = fail
        self.groups: list[str] = []
        self.parallelized: list[Any] = []
        self.tasks: list[list[Any]] = []
        self.modes: list[str] = []

    def setJobGroup(self, group: str, description: str) -> None:
        self.groups.append(group)

    def getConf(self) -> dict[str, str]:
        return {}

    def parallelize(self, data: list[Any], slices: int) -> FakeContext:
        # The migrate job's tasks are (how, slices) units (jobs.migrate_units).
        self.modes = [task[0] for task in data if isinstance(task, tuple)]
        data = [task[1] if isinstance(task, tuple) else task for task in data]
        self.tasks = [list(task) for task in data]
        self.parallelized = [piece for task in data for piece in task]
        return self

    def flatMap(self, fn: Callable[[Any], Any]) -> FakeContext:
        return self

    def collect(self) -> list[Any]:
        if self.fail is not None:
            raise self.fail
        rows, self.rows = self.rows, self.then if self.then is not None else self.rows
        return list(reversed(rows))  # the driver must not rely on task order
