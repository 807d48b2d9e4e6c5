"""kafka_migration.reports.summary: per-topic verdicts, the result table, the dry-run plan text."""

from __future__ import annotations

from dataclasses import replace

from kafka_migration.model.plan import MigrationPlan, PartitionPlan, TopicPlan
from kafka_migration.model.results import FAILED, MISMATCH, OK, UNVERIFIED, TopicOutcome
from kafka_migration.reports.summary import (
    PLAN_DETAILS_TOPICS,
    VERIFIED,
    TopicSummary,
    all_verified,
    render_plan,
    render_table,
    run_status,
    summarize,
    topic_verdict,
)
from tests.unit.factories import migration_plan, topic_plan


def copied(topic: str, records: tuple[int, ...], status: str = OK, error: str | None = None) -> TopicOutcome:
    return TopicOutcome(
        topic,
        topic,
        status,
        1.25,
        [{"partition": p, "records": r, "bytes": r} for p, r in enumerate(records)],
        error,
    )


def verified(topic: str, counts: tuple[tuple[int, int], ...], status: str = OK, error: str | None = None):  # type: ignore[no-untyped-def]
    return TopicOutcome(
        topic,
        topic,
        status,
        0.5,
        [
            {"partition": p, "source_records": s, "target_records": t, "match": s == t}
            for p, (s, t) in enumerate(counts)
        ],
        error,
    )


def row(topic: str, verdict: str = VERIFIED, detail: str | None = None, copied_records: int | None = 5) -> TopicSummary:
    return TopicSummary(topic, f"eu.{topic}", 1, 5, copied_records, 5, 5, verdict, detail, 1.0)


class TestTopicVerdict:
    def test_verified(self) -> None:
        assert topic_verdict(copied("a", (1,)), verified("a", ((1, 1),))) == (VERIFIED, None)

    def test_copy_failure_wins_over_verification(self) -> None:
        assert topic_verdict(copied("a", (), FAILED, "boom"), verified("a", ((1, 1),))) == ("copy failed", "boom")

    def test_not_verified(self) -> None:
        assert topic_verdict(copied("a", (1,)), None) == ("not verified", None)

    def test_mismatch(self) -> None:
        outcome = verified("a", ((1, 2),), MISMATCH, "partition 0: value")
        assert topic_verdict(copied("a", (1,)), outcome) == ("verify mismatch", "partition 0: value")

    def test_unreadable_cluster_could_not_verify(self) -> None:
        outcome = verified("a", ((0, 0),), UNVERIFIED, "partition 0: could not verify: source down")
        assert topic_verdict(copied("a", (1,)), outcome) == (
            "could not verify",
            "partition 0: could not verify: source down",
        )

    def test_verify_without_copy(self) -> None:
        # Nothing to copy (empty ranges) still needs a verification.
        assert topic_verdict(None, verified("a", ((0, 0),))) == (VERIFIED, None)


class TestSummarize:
    def test_rows_follow_plan_order_with_counts(self) -> None:
        plan = migration_plan(topic_plan("b", (3, 4)), topic_plan("a", (2,)))
        rows = summarize(
            plan,
            {"a": copied("a", (2,)), "b": copied("b", (3, 4))},
            {"a": verified("a", ((2, 2),)), "b": verified("b", ((3, 3), (4, 4)))},
        )
        assert [r.source_topic for r in rows] == ["b", "a"]
        b = rows[0]
        assert (b.partitions, b.planned_offsets, b.copied, b.source_records, b.target_records) == (2, 7, 7, 7, 7)
        assert b.verdict == VERIFIED and b.detail is None
        assert b.seconds == 1.8  # 1.25 copy + 0.5 verify, rounded
        assert all_verified(rows)
        assert run_status(rows) == "verified"

    def test_failed_copy_has_no_copied_count(self) -> None:
        plan = migration_plan(topic_plan("a", (5,)))
        (r,) = summarize(plan, {"a": copied("a", (2,), FAILED, "partition 0: timeout")}, {})
        assert r.copied is None
        assert (r.source_records, r.target_records) == (None, None)
        assert (r.verdict, r.detail) == ("copy failed", "partition 0: timeout")
        assert not all_verified([r])
        assert run_status([r]) == "failed"

    def test_topic_missing_from_results_is_not_verified(self) -> None:
        (r,) = summarize(migration_plan(topic_plan("a", (5,))), {}, {})
        assert (r.verdict, r.copied, r.seconds) == ("not verified", None, 0.0)
        assert run_status([r]) == "failed"

    def test_mismatch_counts(self) -> None:
        plan = migration_plan(topic_plan("a", (5,)))
        (r,) = summarize(plan, {"a": copied("a", (5,))}, {"a": verified("a", ((5, 6),), MISMATCH, "count")})
        assert (r.source_records, r.target_records, r.verdict) == (5, 6, "verify mismatch")
        assert run_status([r]) == "mismatch"


class TestRunStatus:
    def test_could_not_verify_is_its_own_status_never_verified_nor_mismatch(self) -> None:
        assert run_status([row("a"), row("b", "could not verify")]) == "unverified"

    def test_a_mismatch_elsewhere_wins(self) -> None:
        assert run_status([row("a", "verify mismatch"), row("b", "could not verify")]) == "mismatch"

    def test_a_failed_copy_wins(self) -> None:
        assert run_status([row("a", "copy failed"), row("b", "could not verify")]) == "failed"


class TestAllVerified:
    def test_empty_is_not_verified(self) -> None:
        assert not all_verified([])

    def test_one_bad_row(self) -> None:
        assert all_verified([row("a"), row("b")])
        assert not all_verified([row("a"), row("b", "verify mismatch")])


class TestRenderTable:
    def test_every_topic_and_verdict_shown(self) -> None:
        rows = [
            row("orders"),
            row("payments", "verify mismatch", "partition 0: value at source offset 3"),
            row("clicks", "copy failed", "partition 1: broker down", copied_records=None),
        ]
        table = render_table(rows)
        lines = table.splitlines()
        assert lines[0].split()[:3] == ["source", "topic", "target"]
        for r in rows:
            line = next(line for line in lines if line.startswith(r.source_topic + " "))
            assert r.target_topic in line and r.verdict in line
        assert "3 topics, 10 records copied, 1 verified" in table
        assert "  payments: partition 0: value at source offset 3" in lines
        assert "  clicks: partition 1: broker down" in lines

    def test_a_topic_with_nothing_new_says_what_its_zero_counts(self) -> None:
        # A later run compares only what is new: "0 source recs ... verified" for a topic whose source holds 300
        # read as if the source were empty (issue 50). The columns name their scope, and a line says why.
        quiet = replace(row("orders"), copied=0, source_records=0, target_records=0)
        table = render_table([quiet, row("payments")])
        assert table.splitlines()[0].split("  ")[4:6] == ["src in range", "tgt in range"]
        assert "in range: the records this run compared, from where the last verified run ended (0: nothing new" in (
            table
        )
        assert "in range:" not in render_table([row("payments")])  # nothing to explain

    def test_missing_numbers_shown_as_dash_and_thousands_separated(self) -> None:
        table = render_table([replace(row("a"), copied=None, source_records=1234567, target_records=None)])
        data = table.splitlines()[2]
        assert "1,234,567" in data
        assert data.split()[3] == "-" and data.split()[5] == "-"

    def test_columns_aligned(self) -> None:
        table = render_table([row("a"), row("a-much-longer-topic-name", "verify mismatch")])
        header, rule, first, second = table.splitlines()[:4]
        assert set(rule.replace(" ", "")) == {"-"}
        # The target topic column starts at the same position on every line.
        column = header.index("target topic")
        assert first[column:].startswith("eu.a ") and second[column:].startswith("eu.a-much-longer-topic-name")

    def test_no_rows(self) -> None:
        assert render_table([]).splitlines()[-1] == "0 topics, 0 records copied, 0 verified"


class TestRenderPlan:
    def test_lists_topics_configs_ranges_warnings_and_skips(self) -> None:
        topic = TopicPlan(
            source_topic="orders",
            target_topic="eu.orders",
            partitions=(
                PartitionPlan(0, start=2, end=1002, target_start=0, earliest=2, latest=1002),
                PartitionPlan(1, start=0, end=0, target_start=0, earliest=0, latest=0),
            ),
            replication_factor=2,
            configs={"cleanup.policy": "compact", "retention.ms": "1000"},
            skipped_configs={"min.insync.replicas": "depends on the target's replication factor"},
            create=True,
            warnings=("source topic uses LogAppendTime",),
        )
        existing = replace(topic_plan("payments", (5,)), create=False)
        plan = replace(
            migration_plan(topic, existing, jobs=(("orders", "payments"),), run_id="run-7"),
            skipped_topics={"_schemas": "internal topic (name it in the include pattern to copy it)"},
        )
        text = render_plan(plan)
        assert text.splitlines()[0] == "Plan run-7"
        assert "source src-id at src:9092 (3 brokers)" in text
        assert "target tgt-id at tgt:9092 (2 brokers)" in text
        assert "2 topics in 1 Spark job" in text
        assert "orders -> eu.orders (create, 2 partitions, replication factor 2, 1,000 offsets to copy)" in text
        assert "payments -> payments (use existing" in text
        assert "configs: cleanup.policy=compact, retention.ms=1000" in text
        assert "not copied: min.insync.replicas (depends on the target's replication factor)" in text
        assert "partition 0: offsets 2–1001 (1,000 offsets), from earliest -> target offset 0" in text
        assert "partition 1: nothing new at offset 0, from earliest -> target offset 0" in text
        assert "warning: source topic uses LogAppendTime" in text
        assert "skipped _schemas: internal topic" in text


def test_a_created_topic_left_at_the_targets_defaults_says_so_in_the_details_and_the_summary() -> None:
    how = "not set: the target's brokers give a new topic cleanup.policy=delete (their log.cleanup.policy), as wanted"
    topics = [replace(topic_plan(f"t.{i}"), config_decisions={"cleanup.policy": how}) for i in range(3)]
    plan = migration_plan(*topics, jobs=(("t.0", "t.1", "t.2"),))
    details = render_plan(plan)
    assert "configs: none set (the target's defaults give what is wanted)" in details
    assert f"cleanup.policy: {how}" in details
    summary = render_plan(plan, details=False, details_option="--show-plan")
    assert "left at the target's defaults (which give what is wanted): cleanup.policy (3 topics)" in summary


def test_counts_of_one_read_in_the_singular() -> None:
    """'1 partitions', '1 topics': every count goes through model.text.plural."""
    one = migration_plan(topic_plan("orders", (1,)), jobs=(("orders",),))
    one = replace(one, source=replace(one.source, broker_count=1))
    text = render_plan(one)
    assert "(1 broker)" in text and "1 topic in 1 Spark job" in text
    assert "(create, 1 partition, replication factor" in text and "1 offset to copy" in text
    assert "0–0" not in text and "offsets 0 (1 offset)" in text
    rows = summarize(one, {"orders": copied("orders", (1,))}, {"orders": verified("orders", ((1, 1),))})
    assert render_table(rows).splitlines()[2:][1] == "1 topic, 1 record copied, 1 verified"


class TestLargePlanSummary:
    """Above PLAN_DETAILS_TOPICS topics the plan prints counts and grouped kinds, not six lines a topic."""

    def big_plan(self, count: int = 5000) -> MigrationPlan:
        topics = []
        for i in range(count):
            topic = topic_plan(f"t.{i:05d}", (0,) if i % 1000 == 7 else (100,))
            if i % 10 == 0:  # one topic in ten exists on the target already
                topic = replace(topic, create=False)
            else:
                topic = replace(
                    topic,
                    configs={"retention.ms": "1000"} if i % 2 else {"cleanup.policy": "compact"},
                    skipped_configs={"min.insync.replicas": "depends on the target's replication factor"},
                )
            if i % 2500 == 3:
                topic = replace(topic, warnings=("source topic uses LogAppendTime",))
            if i == 42:
                topic = replace(topic, partitions=(replace(topic.partitions[0], start=30, expired=30),))
            topics.append(topic)
        jobs = tuple(tuple(t.source_topic for t in topics[i : i + 25]) for i in range(0, count, 25))
        plan = migration_plan(*topics, jobs=jobs, run_id="run-big")
        skipped = {f"_internal.{i}": "internal topic (name it in the include pattern to copy it)" for i in range(40)}
        skipped.update({f"drop.{i}": "matches the exclude pattern" for i in range(2)})
        return replace(plan, skipped_topics=skipped, warnings=tuple(f"lease {i} taken over" for i in range(30)))

    def test_five_thousand_topics_in_a_bounded_summary_with_the_counts(self) -> None:
        plan = self.big_plan()
        text = render_plan(plan, plan_file="/state/runs/run-big/plan.json", details_option="--show-plan")
        lines = text.splitlines()
        assert len(lines) <= 40, text
        assert lines[0] == "Plan run-big"
        assert "5,000 topics in 200 Spark jobs" in text
        # 5 topics of 1000-step with nothing new; one partition starts at 30 (30 offsets expired)
        assert "5,000 partitions, 499,470 offsets to copy (4,995 partitions with records to copy)" in text
        assert "create 4,500 topics on the target; use 500 existing topics (with their own configs)" in text
        assert "nothing new on 5 topics: t.00007, t.01007, t.02007 and 2 more" in text
        assert "30 offsets expired before copying, in 1 partition of t.00042" in text
        assert "configs set on created topics: retention.ms (2,500 topics), cleanup.policy (2,000 topics)" in text
        assert (
            "not copied: min.insync.replicas (depends on the target's replication factor): 4,500 topics "
            "(t.00001, t.00002, t.00003 and 4,497 more)" in text
        )
        assert "warning: source topic uses LogAppendTime: 2 topics (t.00003, t.02503)" in text
        assert "skipped: internal topic (name it in the include pattern to copy it): 40 topics" in text
        assert "skipped: matches the exclude pattern: 2 topics (drop.0, drop.1)" in text
        assert "  warning: lease 0 taken over" in lines and "  and 22 other warnings" in lines
        assert lines[-1] == (
            "  Every topic's configs, ranges and warnings are in the plan file /state/runs/run-big/plan.json; "
            "--show-plan prints them here."
        )
        assert "t.04999" not in text  # no topic listed one by one

    def test_kinds_are_capped_when_every_topic_warns_differently(self) -> None:
        topics = [replace(topic_plan(f"t{i}"), warnings=(f"odd thing {i}",)) for i in range(1000)]
        text = render_plan(migration_plan(*topics))
        assert len(text.splitlines()) <= 20
        assert "and 992 other kinds on 992 topics" in text
        assert "in the run's plan file (plan.json)." in text  # no option named when the caller has none

    def test_details_on_request_and_up_to_the_threshold(self) -> None:
        plan = self.big_plan(200)
        full = render_plan(plan, details=True)
        assert "  t.00199 -> t.00199 (create, 1 partition, replication factor 1, 100 offsets to copy)" in full
        assert len(full.splitlines()) > 200 * 2
        small = migration_plan(*(topic_plan(f"s{i}") for i in range(PLAN_DETAILS_TOPICS)))
        assert f"  s{PLAN_DETAILS_TOPICS - 1} -> s{PLAN_DETAILS_TOPICS - 1} (create" in render_plan(small)
        assert "configs, ranges and warnings are" in render_plan(small, details=False)


def test_summary_names_existing_topics_only_when_there_are_some() -> None:
    plan = migration_plan(*(topic_plan(f"n{i}") for i in range(30)))
    text = render_plan(plan)
    assert "  create 30 topics on the target\n" in text and "existing" not in text


def test_a_table_of_many_topics_lists_only_those_not_verified() -> None:
    """10,000 verified lines would bury the one that matters: above TABLE_TOPICS topics the table lists the
    topics not verified and the totals, and says where every topic is."""
    from kafka_migration.reports.summary import TABLE_TOPICS, TopicSummary

    def topic(name: str, verdict: str = "verified", detail: str | None = None) -> TopicSummary:
        return TopicSummary(name, f"eu.{name}", 1, 100, 100, 100, 100, verdict, detail, 0.1, 1)

    rows = [topic(f"t{i}") for i in range(5_000)] + [topic("bad", "verify mismatch", "[0] value differs at 3")]
    lines = render_table(rows).splitlines()
    assert len(lines) == 6, lines
    assert lines[2].startswith("bad ") and "verify mismatch" in lines[2]
    assert lines[3] == "5,001 topics, 500,100 records copied, 5,000 verified"
    assert lines[4].startswith("5,000 verified topics not listed here") and "its report lists every topic" in lines[4]
    assert lines[5] == "  bad: [0] value differs at 3"
    assert len(render_table(rows, every_topic=True).splitlines()) == 5_001 + 4
    few = [topic(f"t{i}") for i in range(TABLE_TOPICS)]
    assert len(render_table(few).splitlines()) == TABLE_TOPICS + 3  # up to TABLE_TOPICS: a line per topic
    failing = [topic(f"f{i}", "copy failed") for i in range(TABLE_TOPICS + 5)] + [topic("ok")]
    assert "26 topics, 2,600 records copied, 1 verified" in render_table(failing)
    assert "6 topics (5 not verified) not listed here" in render_table(failing)
