"""Pure logic: selection, naming, config filtering, compatibility, planning, checksums, summaries."""

from __future__ import annotations

import pytest

from kafka_migration.exceptions import ConfigurationError
from kafka_migration.model.checksums import RangeChecksum, encode_record
from kafka_migration.model.config import ClusterConfig, MigrationOptions, redact
from kafka_migration.model.naming import target_topic_name
from kafka_migration.model.plan import ClusterInfo, MigrationPlan, group_into_jobs
from kafka_migration.model.state import ConfigValue, TopicState
from kafka_migration.run.discovery import select_topics
from kafka_migration.run.topics import (
    EXCLUDED_CONFIGS,
    compatibility_problems,
    plan_topic,
    split_configs,
)


def state(name: str, partitions: int = 3, configs: dict[str, str] | None = None, latest: int = 10, **kw) -> TopicState:  # type: ignore[no-untyped-def]
    return TopicState(
        name=name,
        partitions=partitions,
        replication_factor=kw.get("rf", 3),
        configs={k: ConfigValue(v, set_on_topic=True) for k, v in (configs or {}).items()},
        earliest={p: 0 for p in range(partitions)},
        latest={p: latest for p in range(partitions)},
    )


TARGET = ClusterInfo("target", "t:9092", "tgt", broker_count=2)


class TestSelection:
    def test_full_match_include_and_exclude(self) -> None:
        sel = select_topics(["orders", "orders.v2", "payments", "xorders"], include="orders.*", exclude=r".*\.v2")
        assert sel.selected == ("orders",)
        assert sel.skipped == {"orders.v2": "matches the exclude pattern"}

    @pytest.mark.parametrize(
        "topic", ["__consumer_offsets", "_schemas", "connect-offsets", "mm2-offset-syncs.internal"]
    )
    def test_internal_topics_skipped_by_wildcards(self, topic: str) -> None:
        sel = select_topics([topic, "orders"])
        assert sel.selected == ("orders",)
        assert "internal" in sel.skipped[topic]

    def test_internal_topic_selected_when_named(self) -> None:
        assert select_topics(["_schemas", "orders"], include="orders|_schemas").selected == ("_schemas", "orders")

    def test_invalid_regex_names_the_pattern(self) -> None:
        with pytest.raises(ConfigurationError, match=r"include pattern 'orders\(' is not a valid"):
            select_topics(["orders"], include="orders(")


class TestNaming:
    def test_template(self) -> None:
        assert target_topic_name("src.{topic}", "orders") == "src.orders"

    @pytest.mark.parametrize("template", ["static", "{topic}-{other}", "{topic}{", "bad name {topic}"])
    def test_bad_templates_rejected(self, template: str) -> None:
        with pytest.raises(ConfigurationError, match="template"):
            MigrationOptions(rename=template)

    def test_name_too_long_rejected(self) -> None:
        with pytest.raises(ConfigurationError, match="not a legal Kafka topic name"):
            target_topic_name("{topic}" + "x" * 250, "orders")


class TestConfigs:
    def test_excluded_configs_skipped_with_reason(self) -> None:
        copied, skipped = split_configs({"cleanup.policy": "compact", "min.insync.replicas": "2", "retention.ms": "5"})
        assert copied == {"cleanup.policy": "compact", "retention.ms": "5"}
        assert skipped == {"min.insync.replicas": EXCLUDED_CONFIGS["min.insync.replicas"]}

    def test_only_entries_set_on_topic_travel(self) -> None:
        s = TopicState(
            "t",
            1,
            1,
            {
                "cleanup.policy": ConfigValue("compact", set_on_topic=True),
                "retention.ms": ConfigValue("604800000", set_on_topic=False),
                "sasl.jaas.config": ConfigValue("x", set_on_topic=True, sensitive=True),
            },
            {0: 0},
            {0: 0},
        )
        assert s.topic_settings() == {"cleanup.policy": "compact"}

    def test_redact_hides_secrets(self) -> None:
        shown = redact({"bootstrap.servers": "b:9092", "sasl.password": "hunter2", "ssl.key.password": "k"})
        assert shown == {"bootstrap.servers": "b:9092", "sasl.password": "***", "ssl.key.password": "***"}

    def test_cluster_config_needs_bootstrap(self) -> None:
        with pytest.raises(ConfigurationError, match=r"source cluster has no 'bootstrap\.servers'"):
            ClusterConfig("source", {})


class TestCompatibility:
    def test_compatible_empty_target(self) -> None:
        assert compatibility_problems(state("a"), state("a", latest=0)) == []

    def test_fewer_partitions(self) -> None:
        (problem,) = compatibility_problems(state("a", 6), state("b", 3, latest=0))
        assert "'b' has 3 partitions" in problem and "--partitions 6" in problem

    def test_small_max_message_bytes(self) -> None:
        problems = compatibility_problems(
            state("a", configs={"max.message.bytes": "2097152"}),
            state("b", configs={"max.message.bytes": "1000"}, latest=0),
        )
        assert any("accepts records up to 1000 bytes" in p for p in problems)

    def test_cleanup_policy_mismatch(self) -> None:
        problems = compatibility_problems(state("a", configs={"cleanup.policy": "compact"}), state("b", latest=0))
        assert any("cleanup.policy=delete" in p for p in problems)

    def test_target_with_foreign_records(self) -> None:
        problems = compatibility_problems(state("a"), state("b", latest=5))
        assert any("already holds records" in p for p in problems)

    def test_replication_factor_capped_by_target_brokers(self) -> None:
        plan, problems = plan_topic(state("a", rf=3), "a", None, TARGET, None)
        assert plan.replication_factor == 2 and plan.create and problems == []
        plan, _ = plan_topic(state("a", rf=3), "a", None, TARGET, 1)
        assert plan.replication_factor == 1


class TestPlan:
    def test_jobs_cover_every_topic_once_and_respect_the_limit(self) -> None:
        topics = [plan_topic(state(f"t{i}", latest=i * 10), f"t{i}", None, TARGET, None)[0] for i in range(23)]
        jobs = group_into_jobs(topics, 5)
        assert len(jobs) == 5 and all(len(j) <= 5 for j in jobs)
        assert sorted(t for j in jobs for t in j) == sorted(t.source_topic for t in topics)

    def test_round_trip(self, tmp_path) -> None:  # type: ignore[no-untyped-def]
        topic, _ = plan_topic(state("a", configs={"cleanup.policy": "compact"}), "x.a", None, TARGET, None)
        plan = MigrationPlan("r1", "now", ClusterInfo("source", "s:1", "src", 1), TARGET, {}, (topic,), {}, (("a",),))
        plan.write(tmp_path / "plan.json")
        assert MigrationPlan.read(tmp_path / "plan.json") == plan


class TestChecksum:
    def test_null_and_empty_differ(self) -> None:
        encodings = {
            encode_record(None, b"v", None, 1),
            encode_record(b"", b"v", None, 1),
            encode_record(b"k", None, None, 1),
            encode_record(b"k", b"", None, 1),
            encode_record(b"k", b"v", [("h", None)], 1),
            encode_record(b"k", b"v", [("h", b"")], 1),
        }
        assert len(encodings) == 6

    def test_order_sensitive(self) -> None:
        a, b = encode_record(b"1", b"x", None, 1), encode_record(b"2", b"y", None, 2)
        first, second = RangeChecksum(), RangeChecksum()
        for e in (a, b):
            first.add(e)
        for e in (b, a):
            second.add(e)
        assert first.count == second.count == 2
        assert first.hexdigest() != second.hexdigest()
