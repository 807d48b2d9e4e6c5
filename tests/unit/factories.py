"""Hand-built TopicState / ClusterInfo / TopicPlan objects for the unit tests (no broker)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from kafka_migration.model.config import ClusterPair
from kafka_migration.model.plan import ClusterInfo, MigrationPlan, PartitionPlan, TopicPlan
from kafka_migration.model.state import ConfigValue, TopicState

SOURCE = ClusterInfo(role="source", bootstrap="src:9092", cluster_id="src-id", broker_count=3)
TARGET = ClusterInfo(role="target", bootstrap="tgt:9092", cluster_id="tgt-id", broker_count=2)
# What the Spark tasks are given: both clusters' settings, roles included (nothing listens there).
CLUSTERS = ClusterPair.of_settings({"bootstrap.servers": "src:9092"}, {"bootstrap.servers": "tgt:9092"})


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

    The task function is never called, so nothing talks to Kafka. A job of migrate units (followers.migrate_units'
    (mode, slices) pairs) gets the canned rows of its slices for its modes (copy rows for COPY, verify rows
    for FOLLOW/VERIFY, both for MIGRATE); ``then`` replaces the rows for VERIFY units (the verification
    again after followers). ``follower_waits``: a FOLLOW job returns only after ``follower_waits`` seconds,
    or raises at once when its job group is cancelled, as a follower waiting for records would.
    """

    def __init__(
        self,
        rows: list[Any] | None = None,
        fail: Exception | None = None,
        slots: int = 1,
        then: list[Any] | None = None,
        follower_waits: float = 0.0,
    ) -> None:
        self.rows = rows or []
        self.then = then  # the rows of a second job, if any
        self.defaultParallelism = slots
        self.fail = fail
        self.follower_waits = follower_waits
        self.groups: list[str] = []
        self.parallelized: list[Any] = []
        self.tasks: list[list[Any]] = []
        self.modes: list[str] = []  # the modes of every unit parallelized, job after job
        self.cancelled: list[str] = []
        self._lock = threading.Lock()
        self._local = threading.local()
        self._cancel = threading.Condition(self._lock)

    def setJobGroup(self, group: str, description: str, interruptOnCancel: bool = False) -> None:
        self._local.group = group
        with self._lock:
            self.groups.append(group)

    def cancelJobGroup(self, group: str) -> None:
        with self._cancel:
            self.cancelled.append(group)
            self._cancel.notify_all()

    def cancelAllJobs(self) -> None:
        with self._cancel:
            self.cancelled.append("*")
            self._cancel.notify_all()

    def getConf(self) -> dict[str, str]:
        return {}

    def parallelize(self, data: list[Any], slices: int) -> _FakeJob:
        units = [task for task in data if isinstance(task, tuple)]
        with self._lock:
            self.modes += [mode for mode, _ in units]
            data = [task[1] if isinstance(task, tuple) else task for task in data]
            self.tasks = [list(task) for task in data]
            self.parallelized = [piece for task in data for piece in task]
        return _FakeJob(self, units, getattr(self._local, "group", ""))


class _FakeJob:
    def __init__(self, context: FakeContext, units: list[tuple[str, list[Any]]], group: str) -> None:
        self.context, self.units, self.group = context, units, group

    def flatMap(self, fn: Callable[[Any], Any]) -> _FakeJob:
        return self

    def collect(self) -> list[Any]:
        ctx = self.context
        if ctx.fail is not None:
            raise ctx.fail
        if not self.units:
            rows, ctx.rows = ctx.rows, ctx.then if ctx.then is not None else ctx.rows
            return list(reversed(rows))  # the driver must not rely on task order
        modes = {mode for mode, _ in self.units}
        if "follow" in modes and ctx.follower_waits:
            with ctx._cancel:
                ctx._cancel.wait_for(lambda: self.group in ctx.cancelled, timeout=ctx.follower_waits)
                if self.group in ctx.cancelled:
                    raise RuntimeError(f"Job cancelled part of cancelled job group {self.group}")
        source = ctx.then if "verify" in modes and ctx.then is not None else ctx.rows
        steps = {"copy": {"copy"}, "follow": {"verify"}, "verify": {"verify"}, "migrate": {"copy", "verify"}}
        wanted = {
            (p.source_topic, p.partition, step) for mode, task in self.units for p in task for step in steps[mode]
        }
        rows = [r for r in source if (r.get("source_topic"), r.get("partition"), r.get("step")) in wanted]
        return list(reversed(rows))
