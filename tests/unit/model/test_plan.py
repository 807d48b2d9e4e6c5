"""kafka_migration.model.plan: job grouping, slices, and the plan's JSON round trip."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kafka_migration.model.plan import (
    MigrationPlan,
    PartitionPlan,
    PartitionSlice,
    TopicPlan,
    group_into_jobs,
)
from tests.unit.factories import SOURCE, TARGET, migration_plan, topic_plan


def _loads(jobs: tuple[tuple[str, ...], ...], topics: list[TopicPlan]) -> list[int]:
    span = {t.source_topic: t.offset_span for t in topics}
    return [sum(span[name] for name in job) for job in jobs]


class TestGroupIntoJobs:
    def test_no_topics_no_jobs(self) -> None:
        assert group_into_jobs([], 5) == ()

    @pytest.mark.parametrize(("n_topics", "per_job", "n_jobs"), [(1, 25, 1), (5, 5, 1), (6, 5, 2), (23, 5, 5)])
    def test_every_topic_exactly_once_within_the_limit(self, n_topics: int, per_job: int, n_jobs: int) -> None:
        topics = [topic_plan(f"t{i:02}", (i * 7 % 13,)) for i in range(n_topics)]
        jobs = group_into_jobs(topics, per_job)
        assert len(jobs) == n_jobs
        assert all(1 <= len(job) <= per_job for job in jobs)
        names = [name for job in jobs for name in job]
        assert sorted(names) == sorted(t.source_topic for t in topics)
        assert len(names) == len(set(names))

    def test_names_sorted_within_a_job(self) -> None:
        jobs = group_into_jobs([topic_plan(n) for n in ("c", "a", "b")], 5)
        assert jobs == (("a", "b", "c"),)

    def test_balances_work_largest_first(self) -> None:
        topics = [topic_plan(name, (span,)) for name, span in [("a", 100), ("b", 60), ("c", 50), ("d", 10)]]
        jobs = group_into_jobs(topics, 2)
        assert {frozenset(j) for j in jobs} == {frozenset({"a", "d"}), frozenset({"b", "c"})}
        assert sorted(_loads(jobs, topics)) == [110, 110]

    def test_capacity_limit_beats_balance(self) -> None:
        topics = [topic_plan("huge", (1_000_000,))] + [topic_plan(f"s{i}", (10,)) for i in range(5)]
        jobs = group_into_jobs(topics, 3)
        # Small topics go to the lighter job until it is full; the rest must join the big topic.
        assert jobs == (("huge", "s3", "s4"), ("s0", "s1", "s2"))

    def test_loads_balanced_for_many_topics(self) -> None:
        topics = [topic_plan(f"t{i:03}", (i * 37 % 101 + 1,)) for i in range(100)]
        jobs = group_into_jobs(topics, 10)
        loads = _loads(jobs, topics)
        assert len(jobs) == 10
        assert max(loads) - min(loads) <= max(t.offset_span for t in topics)

    def test_deterministic(self) -> None:
        topics = [topic_plan(f"t{i}", (5,)) for i in range(9)]
        assert group_into_jobs(topics, 4) == group_into_jobs(list(reversed(topics)), 4)


class TestTopicPlan:
    def test_offset_span_ignores_inverted_ranges(self) -> None:
        plan = TopicPlan(
            "a",
            "a",
            (
                PartitionPlan(0, start=5, end=15, target_start=0, earliest=5, latest=15),
                PartitionPlan(1, start=9, end=3, target_start=0, earliest=0, latest=3),
            ),
            1,
            {},
            {},
            True,
        )
        assert plan.offset_span == 10

    def test_copy_slices_skip_empty_ranges_verify_slices_keep_them(self) -> None:
        plan = topic_plan("a", (10, 0, 4), target_topic="b")
        assert [s.partition for s in plan.slices(include_empty=False)] == [0, 2]
        assert [s.partition for s in plan.slices(include_empty=True)] == [0, 1, 2]
        first = plan.slices(include_empty=False)[0]
        assert first == PartitionSlice("a", "b", 0, 0, 10, 0, PartitionSlice.max_message_bytes)

    def test_slices_carry_max_message_bytes(self) -> None:
        plan = TopicPlan("a", "a", (PartitionPlan(0, 0, 1, 0, 0, 1),), 1, {"max.message.bytes": "5242880"}, {}, True)
        assert plan.slices(include_empty=False)[0].max_message_bytes == 5242880

    def test_the_sources_limit_sizes_the_slices_when_the_created_topic_leaves_it_at_the_targets_default(self) -> None:
        plan = TopicPlan("a", "a", (PartitionPlan(0, 0, 1, 0, 0, 1),), 1, {}, {}, True, max_message_bytes=5242880)
        assert plan.slices(include_empty=False)[0].max_message_bytes == 5242880
        older = MigrationPlan.from_dict({**_full_plan().to_dict()})  # a plan file written before the field
        assert older.topics[0].max_message_bytes is None


def _full_plan() -> MigrationPlan:
    topic = TopicPlan(
        source_topic="orders",
        target_topic="eu.orders",
        partitions=(
            PartitionPlan(0, start=3, end=10, target_start=2, earliest=3, latest=10, origin="checkpoint"),
            PartitionPlan(1, start=5, end=5, target_start=0, earliest=5, latest=5, origin="earliest", expired=4),
        ),
        replication_factor=2,
        configs={"cleanup.policy": "compact"},
        skipped_configs={"min.insync.replicas": "depends on the target's replication factor"},
        create=False,
        warnings=("w1", "w2"),
    )
    return MigrationPlan(
        run_id="run-42",
        created_at="2026-11-22T21:00:00+00:00",
        source=SOURCE,
        target=TARGET,
        options={"include": "orders", "replication_factor": None, "dry_run": False},
        topics=(topic, topic_plan("payments", (1, 2))),
        skipped_topics={"_schemas": "internal topic"},
        jobs=(("orders",), ("payments",)),
        disappeared_topics={"old": "eu.old"},
        warnings=("plan warning",),
    )


class TestMigrationPlan:
    def test_run_order_is_biggest_first_then_the_plans_order_whatever_order_topics_come_in(self) -> None:
        topics = [topic_plan("a", (5,)), topic_plan("b", (50,)), topic_plan("c", (5,)), topic_plan("d", (5,))]
        plan = migration_plan(*topics)
        expected = ["b", "a", "c", "d"]
        assert [t.source_topic for t in plan.run_order()] == expected
        dealt = [topics[3], topics[0], topics[2], topics[1]]  # as jobs deal them
        assert [t.source_topic for t in plan.run_order(dealt)] == expected

    def test_dict_round_trip(self) -> None:
        plan = _full_plan()
        assert MigrationPlan.from_dict(plan.to_dict()) == plan

    def test_json_round_trip_restores_tuples(self) -> None:
        plan = _full_plan()
        restored = MigrationPlan.from_dict(json.loads(plan.to_json()))
        assert restored == plan
        assert isinstance(restored.jobs[0], tuple)
        assert isinstance(restored.topics[0].partitions, tuple)
        assert isinstance(restored.topics[0].warnings, tuple)

    def test_write_read_round_trip(self, tmp_path: Path) -> None:
        plan = _full_plan()
        path = tmp_path / "runs" / "run-42" / "plan.json"
        plan.write(path)
        assert MigrationPlan.read(path) == plan
        assert not path.with_suffix(".tmp").exists()

    def test_write_replaces_existing_file(self, tmp_path: Path) -> None:
        path = tmp_path / "plan.json"
        migration_plan(run_id="first").write(path)
        _full_plan().write(path)
        assert MigrationPlan.read(path).run_id == "run-42"

    def test_reads_plans_without_optional_fields(self) -> None:
        data = _full_plan().to_dict()
        for key in ("skipped_topics", "jobs", "disappeared_topics", "warnings", "target_losses"):
            del data[key]
        for topic in data["topics"]:
            del topic["warnings"]
            for partition in topic["partitions"]:
                del partition["origin"], partition["expired"], partition["aged"]
        plan = MigrationPlan.from_dict(data)
        assert plan.jobs == () and plan.skipped_topics == {} and plan.warnings == ()
        assert plan.target_losses == () and plan.topics[0].partitions[0].aged == 0
        assert plan.topics[0].partitions[0].origin == "earliest"
        assert plan.topics[0].warnings == ()

    def test_plan_json_holds_no_record_data(self) -> None:
        assert set(json.loads(_full_plan().to_json())) == {
            "run_id",
            "created_at",
            "source",
            "target",
            "options",
            "topics",
            "skipped_topics",
            "jobs",
            "disappeared_topics",
            "warnings",
            "target_losses",
            "schemas",  # subjects, versions and ids (never a schema text or a secret): see model/schema_runs.py
        }

    def test_topic_lookup_and_job_topics(self) -> None:
        plan = _full_plan()
        assert plan.topic("payments").source_topic == "payments"
        assert [t.source_topic for t in plan.job_topics(1)] == ["payments"]
        with pytest.raises(KeyError):
            plan.topic("missing")

    def test_offset_span(self) -> None:
        assert _full_plan().offset_span == 7 + 0 + 1 + 2
