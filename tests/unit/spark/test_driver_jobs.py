"""kafka_migration.spark.driver_jobs: task error extraction, packing, per-topic aggregation (no Spark)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from kafka_migration.exceptions import CopyError, StepStoppedError
from kafka_migration.model.plan import TopicPlan
from kafka_migration.model.results import FAILED, MISMATCH, OK, UNVERIFIED, TopicOutcome
from kafka_migration.spark.driver_jobs import (
    BUNDLE_SLICES,
    MOST_SLICES_PER_TASK,
    SLICES_PER_TASK,
    SMALL_SLICE_OFFSETS,
    SMALL_TOPIC_OFFSETS,
    Packing,
    _task_error,
    bundle_topics,
    group_slices,
    run_copy_or_verify,
    run_job,
    run_packing,
    run_step_jobs,
    run_topics,
)
from kafka_migration.spark.executor_tasks import COPY, COPY_FAILED, FOLLOW, MIGRATE, VERIFY
from tests.unit.factories import CLUSTERS, FakeContext, migration_plan, topic_plan

PY4J_TEXT = """An error occurred while calling o71.collectAndServe.
: org.apache.spark.SparkException: Job aborted due to stage failure: Task 0 in stage 3.0 failed 1 times, most recent \
failure: Lost task 0.0 in stage 3.0 (TID 3) (host executor driver): org.apache.spark.api.python.PythonException: \
Traceback (most recent call last):
  File "/opt/venv/lib/python3.11/site-packages/kafka_migration/run/copy.py", line 120, in copy_partition
    raise CopyError(message)
kafka_migration.exceptions.CopyError: orders[2]: target rejected record at offset 17: MSG_SIZE_TOO_LARGE

\tat org.apache.spark.api.python.BasePythonRunner$ReaderIterator.handlePythonException(PythonRunner.scala:572)
\tat org.apache.spark.rdd.RDD.iterator(RDD.scala:328)
"""


class TestTaskError:
    def test_pipeline_error_without_jvm_stack(self) -> None:
        error = _task_error(Exception(PY4J_TEXT))
        assert error == "CopyError: orders[2]: target rejected record at offset 17: MSG_SIZE_TOO_LARGE"

    def test_other_python_error_line(self) -> None:
        text = (
            "Traceback (most recent call last):\n  File 'x.py', line 1\nValueError: bad literal\n\tat org.x(Y.java:1)"
        )
        assert _task_error(Exception(text)) == "ValueError: bad literal"

    def test_last_matching_line_wins(self) -> None:
        text = "RuntimeError: first\nsomething\nKeyError: second"
        assert _task_error(Exception(text)) == "KeyError: second"

    def test_plain_message_last_line(self) -> None:
        assert _task_error(Exception("context\nthe actual problem\n")) == "the actual problem"

    def test_empty_message_falls_back_to_repr(self) -> None:
        assert _task_error(TimeoutError()) == "TimeoutError()"


# --- run_topics / run_copy_or_verify with a stand-in SparkContext: aggregation only, the task function is not run.


def run_topic(sc: FakeContext, step: str, topic: TopicPlan) -> TopicOutcome:
    return run_topics(sc, step, [topic], CLUSTERS)[0]


@dataclass
class CopyRow:
    partition: int
    records: int
    bytes: int
    error: str | None = None


@dataclass
class TopicCopyRow:
    source_topic: str
    partition: int
    records: int
    bytes: int
    error: str | None = None


@dataclass
class VerifyRow:
    partition: int
    source_records: int
    target_records: int
    match: bool
    first_difference: str | None = None
    first_source_offset: int | None = None
    first_target_offset: int | None = None
    error: str | None = None


class TestRunTopic:
    def test_copy_ok_sorted_by_partition(self) -> None:
        ctx = FakeContext([CopyRow(0, 3, 30), CopyRow(1, 4, 40)])
        outcome = run_topic(ctx, "copy", topic_plan("a", (3, 4)))
        assert outcome.status == OK and outcome.error is None
        assert [p["partition"] for p in outcome.partitions] == [0, 1]
        assert (outcome.records, outcome.bytes) == (7, 70)
        assert ctx.groups == ["copy:a"]

    def test_copy_skips_empty_slices_verify_keeps_them(self) -> None:
        ctx = FakeContext()
        run_topic(ctx, "copy", topic_plan("a", (3, 0)))
        assert [s.partition for s in ctx.parallelized] == [0]
        run_topic(ctx, "verify", topic_plan("a", (3, 0)))
        assert [s.partition for s in ctx.parallelized] == [0, 1]

    def test_nothing_to_copy_runs_no_tasks(self) -> None:
        ctx = FakeContext(fail=AssertionError("no task expected"))
        outcome = run_topic(ctx, "copy", topic_plan("a", (0, 0)))
        assert outcome.status == OK and outcome.partitions == []

    def test_copy_partition_errors_fail_the_topic(self) -> None:
        ctx = FakeContext([CopyRow(0, 3, 30), CopyRow(1, 0, 0, "broker down")])
        outcome = run_topic(ctx, "copy", topic_plan("a", (3, 4)))
        assert outcome.status == FAILED
        assert outcome.error == "partition 1: broker down"

    def test_failed_task_keeps_the_python_error(self) -> None:
        ctx = FakeContext(fail=Exception(PY4J_TEXT))
        outcome = run_topic(ctx, "copy", topic_plan("orders", (3,)))
        assert outcome.status == FAILED
        assert outcome.error is not None and outcome.error.startswith("CopyError: orders[2]")
        assert outcome.partitions == []

    def test_verify_mismatch_names_partition_and_offsets(self) -> None:
        rows = [VerifyRow(0, 3, 3, True), VerifyRow(1, 4, 4, False, "value", 12, 10)]
        outcome = run_topic(FakeContext(rows), "verify", topic_plan("a", (3, 4)))
        assert outcome.status == MISMATCH
        assert outcome.error == (
            "1 of 2 partitions differs: [1] value at source offset 12 / target offset 10 (source 4 records, target 4)"
        )

    def test_unreadable_partition_is_unverified_not_a_mismatch(self) -> None:
        rows = [VerifyRow(0, 3, 3, True), VerifyRow(1, 0, 0, False, "verification could not read", error="source down")]
        outcome = run_topic(FakeContext(rows), "verify", topic_plan("a", (3, 4)))
        assert outcome.status == UNVERIFIED
        assert outcome.error == "partition 1: could not verify: source down"

    def test_a_real_difference_outweighs_an_unreadable_partition(self) -> None:
        rows = [VerifyRow(0, 3, 3, False, "value", 1, 1), VerifyRow(1, 0, 0, False, "unread", error="target down")]
        outcome = run_topic(FakeContext(rows), "verify", topic_plan("a", (3, 4)))
        assert outcome.status == MISMATCH
        assert outcome.error is not None and "partition 1: could not verify: target down" in outcome.error

    def test_a_failed_verify_job_is_unverified(self) -> None:
        outcome = run_topic(FakeContext(fail=Exception(PY4J_TEXT)), "verify", topic_plan("a", (3,)))
        assert outcome.status == UNVERIFIED


class TestBundles:
    def test_big_topics_alone_small_ones_packed(self) -> None:
        big = topic_plan("big", (SMALL_TOPIC_OFFSETS + 1,))
        small = [topic_plan(f"s{i}", (10, 10, 10, 10)) for i in range(40)]
        bundles = bundle_topics([big, *small], "copy")
        assert bundles[0] == [big]
        assert [len(b) for b in bundles[1:]] == [16, 16, 8]  # 64 slices a job at most
        assert [t for b in bundles[1:] for t in b] == small  # order kept

    def test_verify_counts_empty_partitions_as_tasks(self) -> None:
        small = [topic_plan(f"s{i}", (0, 0, 0, 5)) for i in range(20)]
        assert [len(b) for b in bundle_topics(small, "copy")] == [20]  # one copy task each
        assert [len(b) for b in bundle_topics(small, "verify")] == [BUNDLE_SLICES // 4, 20 - BUNDLE_SLICES // 4]

    def test_small_slices_share_tasks_big_ones_do_not(self) -> None:
        big = SMALL_SLICE_OFFSETS + 1
        slices = topic_plan("a", (big, 2000, 2000, 2000, big, 0, 0)).slices(include_empty=True)
        tasks = group_slices(slices)
        assert [[s.partition for s in t] for t in tasks] == [[0], [1, 2], [4], [3, 5, 6]]
        many = topic_plan("b", (0,) * (SLICES_PER_TASK + 1)).slices(include_empty=True)
        assert [len(t) for t in group_slices(many)] == [SLICES_PER_TASK, 1]

    def test_rows_go_back_to_their_topics(self) -> None:
        rows = [TopicCopyRow("b", 0, 5, 50), TopicCopyRow("a", 1, 2, 20), TopicCopyRow("a", 0, 1, 10, "broker down")]
        ctx = FakeContext(rows)
        a, b = run_topics(ctx, "copy", [topic_plan("a", (3, 4)), topic_plan("b", (5,))], CLUSTERS)
        assert ctx.groups == ["copy:a and 1 more topic"]
        assert [[s.source_topic for s in task] for task in ctx.tasks] == [["a", "a", "b"]]
        assert (a.status, a.records, [p["partition"] for p in a.partitions]) == (FAILED, 3, [0, 1])
        assert a.error == "partition 0: broker down"
        assert (b.status, b.records) == (OK, 5)

    def test_a_failed_job_fails_each_of_its_topics(self) -> None:
        ctx = FakeContext(fail=Exception(PY4J_TEXT))
        outcomes = run_topics(ctx, "copy", [topic_plan("a"), topic_plan("b")], CLUSTERS)
        assert [(o.source_topic, o.status) for o in outcomes] == [("a", FAILED), ("b", FAILED)]
        assert all(o.error and o.error.startswith("CopyError: orders[2]") for o in outcomes)


class TestRunStep:
    def test_unknown_step(self) -> None:
        with pytest.raises(ValueError, match="unknown step 'move'"):
            run_copy_or_verify(FakeContext(), "move", migration_plan(), [], CLUSTERS)

    def test_results_keyed_in_plan_order_with_callback(self) -> None:
        topics = [topic_plan("small", (0,)), topic_plan("big", (0,))]
        plan = migration_plan(*topics, run_id="run-9")
        done: list[str] = []
        results = run_copy_or_verify(
            FakeContext(), "copy", plan, topics, CLUSTERS, on_topic_done=lambda o: done.append(o.source_topic)
        )
        assert results.step == "copy" and results.run_id == "run-9"
        assert list(results.topics) == ["small", "big"]
        assert sorted(done) == ["big", "small"]
        assert results.ok


# --- the migrate step: copy and verification in one Spark job (task functions stand in for Kafka).


def _copy_row(topic: str, partition: int, records: int, error: str | None = None, at: float = 100.0) -> dict[str, Any]:
    return {"step": "copy", "source_topic": topic, "partition": partition, "records": records, "bytes": records,
            "seconds": 1.0, "error": error, "started": at, "ended": at + 1.0}  # fmt: skip


def _verify_row(topic: str, partition: int, match: bool = True, at: float = 101.0, **extra: Any) -> dict[str, Any]:
    return {"step": "verify", "source_topic": topic, "partition": partition, "source_records": 3,
            "target_records": 3, "match": match, "first_difference": None if match else "value differs",
            "first_source_offset": None if match else 1, "first_target_offset": None if match else 1,
            "seconds": 0.5, "error": None, "started": at, "ended": at + 0.5, **extra}  # fmt: skip


class TestMigrate:
    def test_one_job_gives_both_outcomes_with_their_own_spans_and_job_size(self) -> None:
        rows = [_copy_row("a", 0, 3), _copy_row("a", 1, 4, at=100.5), _copy_row("b", 0, 5, at=99.0),
                _verify_row("a", 0),
                _verify_row("a", 1, at=102.0), _verify_row("b", 0, match=False)]  # fmt: skip
        ctx = FakeContext(rows)
        done = run_job(ctx, "migrate", [topic_plan("a", (3, 4)), topic_plan("b", (5, 0))], CLUSTERS)
        assert ctx.groups == ["migrate:a and 1 more topic"]
        # verification's slices: the empty partition b[1] too (the target must be empty there as well)
        assert [(s.source_topic, s.partition) for s in ctx.parallelized] == [("a", 0), ("a", 1), ("b", 0), ("b", 1)]
        copy_a, copy_b = done["copy"]
        verify_a, verify_b = done["verify"]
        assert (copy_a.status, copy_a.records, copy_b.records) == (OK, 7, 5)
        assert (verify_a.status, verify_b.status) == (OK, MISMATCH)
        assert all("step" not in p for o in (copy_a, verify_a) for p in o.partitions)
        assert {o.job_topics for o in (copy_a, copy_b, verify_a, verify_b)} == {2}
        assert copy_a.seconds == 2.5 and verify_a.seconds == 1.5  # each step's span in the job, not the job twice

    def test_a_failed_job_fails_the_copy_and_leaves_verification_unverified(self) -> None:
        done = run_job(FakeContext(fail=Exception(PY4J_TEXT)), "migrate", [topic_plan("a")], CLUSTERS)
        assert [o.status for o in done["copy"]] == [FAILED]
        assert [o.status for o in done["verify"]] == [UNVERIFIED]

    def test_run_step_jobs_returns_both_results(self) -> None:
        topics = [topic_plan("a", (3,))]
        results = run_step_jobs(
            FakeContext([_copy_row("a", 0, 3), _verify_row("a", 0)]),
            "migrate",
            migration_plan(*topics),
            topics,
            CLUSTERS,
        )
        assert sorted(results) == ["copy", "verify"]
        assert results["copy"].step == "copy" and results["verify"].step == "verify"
        assert results["copy"].ok and results["verify"].ok

    def test_each_job_starts_only_once_the_launcher_released_its_topics(self) -> None:
        big = SMALL_TOPIC_OFFSETS + 1
        topics = [
            topic_plan("s1", (5,)),
            topic_plan("b1", (big,)),
            topic_plan("s2", (5,)),
            topic_plan("b2", (big + 1,)),
        ]
        plan = migration_plan(*topics)
        assert [t.source_topic for t in plan.run_order()] == ["b2", "b1", "s1", "s2"]
        ctx = FakeContext([])
        asked: list[tuple[int, list[str]]] = []

        def release(count: int) -> bool:
            asked.append((count, list(ctx.groups)))
            return True

        run_step_jobs(ctx, "copy", plan, topics, CLUSTERS, parallel_topics=1, release=release)
        # b2 alone, b1 alone, then s1 and s2 in one job: each asked for the run order up to its last topic
        assert [count for count, _ in asked] == [1, 2, 4]
        assert "copy:s1 and 1 more topic" not in asked[-1][1]  # not started before it was released
        assert sorted(ctx.groups) == ["copy:b1", "copy:b2", "copy:s1 and 1 more topic"]

    def test_a_launcher_that_says_stop_before_a_release_stops_the_step_and_its_running_jobs(self) -> None:
        big = SMALL_TOPIC_OFFSETS + 1
        topics = [topic_plan("b1", (big + 1,)), topic_plan("b2", (big,)), topic_plan("b3", (big,))]
        ctx = FakeContext([])
        with pytest.raises(StepStoppedError, match="copy: stopped before every target topic was released"):
            run_step_jobs(ctx, "copy", migration_plan(*topics), topics, CLUSTERS, release=lambda count: count < 2)
        assert "copy:b2" not in ctx.groups and "copy:b3" not in ctx.groups
        assert "*" in ctx.cancelled  # the jobs that had started are cancelled

    def test_a_big_slice_is_followed_when_the_slots_allow_copy_and_follower_at_once(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        big = SMALL_SLICE_OFFSETS + 1
        monkeypatch.setattr(
            "kafka_migration.kafka.reader.end_offset", lambda *a, **k: big
        )  # nothing after the follower
        rows = [_copy_row("a", 0, big, at=100.0), _verify_row("a", 0, at=100.2, target_end=big)]
        ctx = FakeContext(rows, slots=2)
        done = run_job(ctx, "migrate", [topic_plan("a", (big,))], CLUSTERS)
        assert sorted(ctx.modes) == [COPY, FOLLOW]  # jobs of their own, launched from threads
        assert (done["copy"][0].status, done["verify"][0].status) == (OK, OK)
        # One slot: the follower could only run after the copy, so the task copies, then verifies.
        ctx = FakeContext(rows, slots=1)
        run_job(ctx, "migrate", [topic_plan("a", (big,))], CLUSTERS)
        assert ctx.modes == [MIGRATE]

    @pytest.mark.parametrize("end", [SMALL_SLICE_OFFSETS + 2, None])
    def test_records_written_after_a_follower_ended_are_extra(
        self, monkeypatch: pytest.MonkeyPatch, end: int | None
    ) -> None:
        big = SMALL_SLICE_OFFSETS + 1

        def end_offset(cluster: Any, topic: str, partition: int) -> int:
            if end is None:
                raise CopyError("target unreachable")
            return end

        monkeypatch.setattr("kafka_migration.kafka.reader.end_offset", end_offset)
        rows = [_copy_row("a", 0, big), _verify_row("a", 0, target_end=big)]
        (verified,) = run_job(FakeContext(rows, slots=2), "migrate", [topic_plan("a", (big,))], CLUSTERS)["verify"]
        (row,) = verified.partitions
        if end is None:  # the end could not be read again: unverified, never a pass
            assert verified.status == UNVERIFIED and "target unreachable" in row["error"]
        else:
            assert verified.status == MISMATCH and row["first_difference"] == "extra record on the target"
            assert (row["first_target_offset"], row["target_end"]) == (big, end)

    def test_a_follower_that_gave_up_waiting_after_a_good_copy_is_verified_again(self) -> None:
        from kafka_migration.kafka.reader import FOLLOW_GAVE_UP

        big = SMALL_SLICE_OFFSETS + 1
        rows = [_copy_row("a", 0, big), _verify_row("a", 0, match=False, error=f"no new record {FOLLOW_GAVE_UP}")]
        # The copy reported success but wrote a record less: verified after it ended, the difference is named.
        missing = _verify_row("a", 0, match=False, at=130.0, first_difference="record missing on the target")
        ctx = FakeContext(rows, slots=2, then=[missing])
        (verified,) = run_job(ctx, "migrate", [topic_plan("a", (big,))], CLUSTERS)["verify"]
        assert sorted(ctx.modes[:2]) == [COPY, FOLLOW] and ctx.modes[2:] == [VERIFY]
        assert verified.status == MISMATCH and "record missing on the target" in (verified.error or "")
        (row,) = verified.partitions
        assert row["started"] == 130.0

    def test_a_followed_slice_whose_copy_failed_is_not_verified(self) -> None:
        big = SMALL_SLICE_OFFSETS + 1
        # The follower gave up waiting (or even matched what was there): the copy's failure decides.
        rows = [_copy_row("a", 0, 0, error="broker gone"), _verify_row("a", 0, at=100.2, executor={"host": "h"})]
        done = run_job(FakeContext(rows, slots=2), "migrate", [topic_plan("a", (big,))], CLUSTERS)
        (verified,) = done["verify"]
        assert verified.status == UNVERIFIED
        (row,) = verified.partitions
        assert row["error"] == COPY_FAILED and not row["match"]
        assert (row["started"], row["ended"], row["executor"]) == (100.2, 100.7, {"host": "h"})

    def test_a_follower_still_waiting_when_its_copy_fails_is_cancelled(self) -> None:
        big = SMALL_SLICE_OFFSETS + 1
        rows = [_copy_row("a", 0, 0, error="broker gone"), _verify_row("a", 0)]
        # The follower would wait 30 s for records nobody writes: the failed copy cancels its job instead.
        ctx = FakeContext(rows, slots=2, follower_waits=30.0)
        (verified,) = run_job(ctx, "migrate", [topic_plan("a", (big,))], CLUSTERS)["verify"]
        assert ctx.cancelled == ["migrate:a:follow1"]
        assert verified.status == UNVERIFIED
        (row,) = verified.partitions
        assert row["error"] == COPY_FAILED and not row["match"] and row["started"] == row["ended"]

    def test_a_follower_behind_a_good_copy_is_left_to_finish(self) -> None:
        big = SMALL_SLICE_OFFSETS + 1
        rows = [_copy_row("a", 0, big), _verify_row("a", 0, target_end=big)]
        ctx = FakeContext(rows, slots=2, follower_waits=0.2)
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr("kafka_migration.kafka.reader.end_offset", lambda *a, **k: big)
            (verified,) = run_job(ctx, "migrate", [topic_plan("a", (big,))], CLUSTERS)["verify"]
        assert ctx.cancelled == [] and verified.status == OK

    def test_a_failed_copy_job_cancels_the_followers_and_fails_the_topic(self) -> None:
        big = SMALL_SLICE_OFFSETS + 1
        ctx = FakeContext(fail=Exception(PY4J_TEXT), slots=4, follower_waits=30.0)
        done = run_job(ctx, "migrate", [topic_plan("a", (big, big))], CLUSTERS)
        assert sorted(ctx.cancelled) == ["migrate:a:follow2", "migrate:a:follow3"]
        assert [o.status for o in done["copy"]] == [FAILED] and [o.status for o in done["verify"]] == [UNVERIFIED]

    def test_run_step_refuses_migrate(self) -> None:
        with pytest.raises(ValueError, match="unknown step 'migrate'"):
            run_copy_or_verify(FakeContext(), "migrate", migration_plan(), [], CLUSTERS)


def test_partitions_that_fail_the_same_way_are_one_entry_of_their_topic() -> None:
    ctx = FakeContext([CopyRow(p, 0, 0, "target down") for p in range(11)] + [CopyRow(11, 0, 0, "too large")])
    outcome = run_topic(ctx, "copy", topic_plan("a", (3,) * 12))
    assert outcome.error == "partitions 0–10 (11 partitions): target down; partition 11: too large"
    rows = [VerifyRow(p, 4, 5, False, "extra record on the target", None, 4) for p in range(7)]
    outcome = run_topic(FakeContext(rows), "verify", topic_plan("a", (4,) * 7))
    assert outcome.error is not None and outcome.error.startswith(
        "7 of 7 partitions differ: [0] extra record on the target at source offset – / target offset 4 "
        "(source 4 records, target 5); [1] "
    )
    assert outcome.error.endswith("; and 2 more")


class TestPacking:
    def test_runs_up_to_four_tasks_of_sixteen_slices_per_slot_keep_the_default(self) -> None:
        assert Packing.for_run(0, 2) == Packing()
        assert Packing.for_run(2 * 4 * SLICES_PER_TASK, 2) == Packing()

    def test_thousands_of_small_slices_share_bigger_tasks_and_jobs(self) -> None:
        packing = Packing.for_run(10_000, 2)  # 10,000 one-partition topics on two slots
        assert packing.slices_per_task == MOST_SLICES_PER_TASK
        assert packing.bundle_slices == BUNDLE_SLICES * MOST_SLICES_PER_TASK // SLICES_PER_TASK
        assert packing.task_offsets == SMALL_SLICE_OFFSETS * MOST_SLICES_PER_TASK // SLICES_PER_TASK
        middle = Packing.for_run(64 * 2 * 4, 2)  # every slot still gets four tasks
        assert middle.slices_per_task == 64

    def test_tasks_and_jobs_follow_the_packing(self) -> None:
        topics = [topic_plan(f"t{i:04d}", (100,)) for i in range(1_000)]
        packing = run_packing(topics, "migrate", slots=2)
        assert packing.slices_per_task == 1_000 // 8
        bundles = bundle_topics(topics, "migrate", packing)
        assert {len(b) for b in bundles[:-1]} == {packing.bundle_slices}
        slices = [s for t in bundles[0] for s in t.slices(include_empty=True)]
        assert {len(task) for task in group_slices(slices, packing)} == {packing.slices_per_task}
        assert len(bundle_topics(topics, "migrate")) == -(-1_000 // BUNDLE_SLICES)  # the default: 16 jobs
