"""kafka_migration.run.topics and TopicState: target names, config filtering, compatibility, per-topic plans."""

from __future__ import annotations

import pytest

from kafka_migration.exceptions import ConfigurationError
from kafka_migration.model.naming import target_topic_name, validate_rename_template
from kafka_migration.model.plan import ClusterInfo
from kafka_migration.model.state import KAFKA_DEFAULT_MAX_MESSAGE_BYTES, ConfigValue, TopicState
from kafka_migration.run.positions import Position
from kafka_migration.run.topics import (
    EXCLUDED_CONFIGS,
    compatibility_problems,
    plan_topic,
    split_configs,
)
from tests.unit.factories import TARGET, topic_state


class TestRenameTemplate:
    @pytest.mark.parametrize(
        ("template", "name"),
        [
            ("{topic}", "orders"),
            ("src.{topic}", "src.orders"),
            ("{topic}-copy", "orders-copy"),
            ("eu_{topic}.v2", "eu_orders.v2"),
        ],
    )
    def test_valid(self, template: str, name: str) -> None:
        """Accepted, and it names each topic's target as written: the topic where the placeholder stands."""
        assert validate_rename_template(template) is None
        assert target_topic_name(template, "orders") == name

    @pytest.mark.parametrize("template", ["static", "", "{{topic}}", "src.{name}", "{0}", "{}"])
    def test_without_topic_placeholder_rejected(self, template: str) -> None:
        with pytest.raises(ConfigurationError, match=r"must contain the placeholder \{topic\} exactly once"):
            validate_rename_template(template)

    @pytest.mark.parametrize("template", ["{topic}.{topic}", "{topic}-{env}", "{topic.upper}", "{topic[0]}"])
    def test_extra_or_indexed_placeholders_rejected(self, template: str) -> None:
        with pytest.raises(ConfigurationError, match="exactly once and no other placeholder"):
            validate_rename_template(template)

    @pytest.mark.parametrize("template", ["{topic", "topic}", "{topic}}x{"])
    def test_malformed_rejected(self, template: str) -> None:
        with pytest.raises(ConfigurationError, match="is malformed"):
            validate_rename_template(template)

    @pytest.mark.parametrize("template", ["src/{topic}", "a b{topic}", "{topic}:v1", "x" * 249 + "{topic}"])
    def test_illegal_characters_or_length_rejected(self, template: str) -> None:
        with pytest.raises(ConfigurationError, match="makes illegal topic names"):
            validate_rename_template(template)

    @pytest.mark.parametrize(
        "template", ["{topic!r}", "{topic!s}", "{topic:x}", "{topic:.3}", "{topic:>20}", "{topic:{width}}"]
    )
    def test_conversions_and_format_specs_rejected_as_configuration_errors(self, template: str) -> None:
        # A format spec can truncate names ('{topic:.3}' maps 'orders' and 'orderly' to 'ord', so two
        # source topics would be copied into one target topic) or crash str.format ('{topic:x}').
        with pytest.raises(ConfigurationError, match=r"Rename template"):
            validate_rename_template(template)


class TestTargetTopicName:
    def test_same_name(self) -> None:
        assert target_topic_name("{topic}", "orders") == "orders"

    def test_prefix_and_suffix(self) -> None:
        assert target_topic_name("eu.{topic}-v2", "orders") == "eu.orders-v2"

    def test_too_long_result_names_template_and_topic(self) -> None:
        with pytest.raises(ConfigurationError, match=r"'src\.\{topic\}' turns 'xxx.*' into .*not a legal Kafka topic"):
            target_topic_name("src.{topic}", "x" * 246)

    def test_249_characters_allowed(self) -> None:
        assert len(target_topic_name("src.{topic}", "x" * 245)) == 249

    @pytest.mark.parametrize("topic", [".", ".."])
    def test_dot_names_rejected(self, topic: str) -> None:
        with pytest.raises(ConfigurationError, match="not a legal Kafka topic name"):
            target_topic_name("{topic}", topic)


class TestSplitConfigs:
    def test_every_excluded_config_skipped_with_its_reason(self) -> None:
        settings = dict.fromkeys(EXCLUDED_CONFIGS, "1")
        copied, skipped = split_configs(settings)
        assert copied == {}
        assert skipped == EXCLUDED_CONFIGS
        assert all(reason.strip() for reason in skipped.values())

    @pytest.mark.parametrize("name", sorted(EXCLUDED_CONFIGS))
    def test_each_excluded_config_is_not_copied(self, name: str) -> None:
        copied, skipped = split_configs({name: "x", "retention.ms": "1000"})
        assert copied == {"retention.ms": "1000"}
        assert skipped == {name: EXCLUDED_CONFIGS[name]}

    def test_other_configs_copied_verbatim(self) -> None:
        settings = {
            "cleanup.policy": "compact,delete",
            "retention.ms": "604800000",
            "max.message.bytes": "2097152",
            "compression.type": "zstd",
            "segment.bytes": "1073741824",
        }
        copied, skipped = split_configs(settings)
        assert copied == settings
        assert skipped == {}

    def test_does_not_mutate_input(self) -> None:
        settings = {"min.insync.replicas": "2", "retention.ms": "5"}
        split_configs(settings)
        assert settings == {"min.insync.replicas": "2", "retention.ms": "5"}


class TestTopicSettings:
    def test_only_values_set_on_the_topic_and_safe_to_copy(self) -> None:
        state = TopicState(
            name="t",
            partitions=1,
            replication_factor=1,
            configs={
                "cleanup.policy": ConfigValue("compact", set_on_topic=True),
                "retention.ms": ConfigValue("604800000", set_on_topic=False),  # broker default
                "segment.bytes": ConfigValue("1024", set_on_topic=True, read_only=True),
                "sasl.jaas.config": ConfigValue("secret", set_on_topic=True, sensitive=True),
                "compression.type": ConfigValue(None, set_on_topic=True),
                "max.message.bytes": ConfigValue("2097152", set_on_topic=True),
            },
            earliest={0: 0},
            latest={0: 0},
        )
        assert state.topic_settings() == {"cleanup.policy": "compact", "max.message.bytes": "2097152"}

    def test_config_lookup(self) -> None:
        state = topic_state("t", configs={"cleanup.policy": "compact"})
        assert state.config("cleanup.policy") == "compact"
        assert state.config("retention.ms") is None


class TestCompatibility:
    def test_identical_empty_target_is_compatible(self) -> None:
        assert compatibility_problems(topic_state("a"), topic_state("b", latest=0)) == []

    def test_target_with_more_partitions_and_larger_limit_is_compatible(self) -> None:
        source = topic_state("a", 3, configs={"max.message.bytes": "1000"})
        target = topic_state("b", 6, configs={"max.message.bytes": "5000"}, latest=0)
        assert compatibility_problems(source, target) == []

    def test_records_the_ledger_does_not_know_ask_about_the_ledger_before_any_deletion(self) -> None:
        # A mistyped --ledger or --state-dir makes the tool's own records look foreign: the refusal names the
        # ledger in use and asks about it first; deleting comes only after, and only if it is the right one.
        (problem,) = compatibility_problems(
            topic_state("orders", 1), topic_state("orders", 1, latest=300), ledger="/data/km/ledger.db"
        )
        assert "offsets 0–299 (300 offsets) that the ledger in use (/data/km/ledger.db) has no record" in problem
        check = problem.index("First check that this is the ledger your earlier runs used (--ledger, --state-dir")
        assert check < problem.index("Only if it is: empty or delete the target topic")
        (unnamed,) = compatibility_problems(topic_state("orders", 1), topic_state("orders", 1, latest=300))
        assert "that this run, without a ledger, has no record" in unnamed

    def test_fewer_partitions(self) -> None:
        (problem,) = compatibility_problems(topic_state("orders", 6), topic_state("eu.orders", 3, latest=0))
        assert "target topic 'eu.orders' has 3 partitions" in problem
        assert "source topic 'orders' has 6" in problem
        assert "--partitions 6" in problem

    def test_smaller_max_message_bytes(self) -> None:
        (problem,) = compatibility_problems(
            topic_state("orders", configs={"max.message.bytes": "2097152"}),
            topic_state("eu.orders", configs={"max.message.bytes": "1000"}, latest=0),
        )
        assert "target topic 'eu.orders' accepts records up to 1000 bytes" in problem
        assert "source topic 'orders' allows 2097152" in problem

    def test_max_message_bytes_defaults_to_kafka_default(self) -> None:
        source = topic_state("a", configs={"max.message.bytes": str(KAFKA_DEFAULT_MAX_MESSAGE_BYTES + 1)})
        (problem,) = compatibility_problems(source, topic_state("b", latest=0))
        assert f"up to {KAFKA_DEFAULT_MAX_MESSAGE_BYTES} bytes" in problem
        same = topic_state("a", configs={"max.message.bytes": str(KAFKA_DEFAULT_MAX_MESSAGE_BYTES)})
        assert compatibility_problems(same, topic_state("b", latest=0)) == []

    def test_different_cleanup_policy(self) -> None:
        (problem,) = compatibility_problems(
            topic_state("orders", configs={"cleanup.policy": "compact"}), topic_state("eu.orders", latest=0)
        )
        assert "target topic 'eu.orders' has cleanup.policy=delete" in problem
        assert "source topic 'orders' has compact" in problem

    @pytest.mark.parametrize(("source", "target"), [("compact,delete", "delete, compact"), (None, "delete")])
    def test_equivalent_cleanup_policies(self, source: str | None, target: str) -> None:
        source_configs = {"cleanup.policy": source} if source else {}
        assert (
            compatibility_problems(
                topic_state("a", configs=source_configs),
                topic_state("b", configs={"cleanup.policy": target}, latest=0),
            )
            == []
        )

    def test_non_empty_target_partition(self) -> None:
        target = topic_state("eu.orders", 3, earliest={0: 0, 1: 4, 2: 0}, latest={0: 0, 1: 9, 2: 0})
        (problem,) = compatibility_problems(topic_state("orders", 3), target)
        assert "target topic 'eu.orders' partition 1 already holds records at offsets 4–8 (5 offsets)" in problem

    def test_a_single_record_makes_a_partition_non_empty(self) -> None:
        target = topic_state("b", 2, earliest={0: 0, 1: 41}, latest={0: 0, 1: 42})
        (problem,) = compatibility_problems(topic_state("a", 2), target)
        assert "target topic 'b' partition 1 already holds records at offsets 41 (1 offset)" in problem

    def test_non_empty_check_reports_one_partition_per_topic(self) -> None:
        problems = compatibility_problems(topic_state("a", 3), topic_state("b", 3, latest=5))
        assert len(problems) == 1 and "partition 0" in problems[0]

    def test_partition_emptied_by_retention_is_empty(self) -> None:
        assert compatibility_problems(topic_state("a"), topic_state("b", earliest=7, latest=7)) == []

    def test_records_in_extra_target_partitions_are_ignored(self) -> None:
        target = topic_state("b", 4, latest={0: 0, 1: 0, 2: 0, 3: 5})
        assert compatibility_problems(topic_state("a", 3), target) == []

    def test_partitions_the_pipeline_wrote_before_are_not_foreign(self) -> None:
        problems = compatibility_problems(topic_state("a", 2), topic_state("b", 2, latest=5), frozenset({0, 1}))
        assert problems == []

    def test_every_problem_reported_at_once(self) -> None:
        source = topic_state("orders", 4, configs={"max.message.bytes": "5000", "cleanup.policy": "compact"})
        target = topic_state("eu.orders", 2, configs={"max.message.bytes": "100"}, latest=3)
        problems = compatibility_problems(source, target)
        assert len(problems) == 4
        assert all("'eu.orders'" in p for p in problems)


class TestPlanTopic:
    @pytest.mark.parametrize(("source_rf", "brokers", "expected"), [(3, 2, 2), (1, 3, 1), (3, 3, 3), (0, 2, 1)])
    def test_replication_factor_is_min_of_source_and_target_brokers(
        self, source_rf: int, brokers: int, expected: int
    ) -> None:
        target = ClusterInfo("target", "t:9092", "tgt", broker_count=brokers)
        plan, problems = plan_topic(topic_state("a", rf=source_rf), "a", None, target, None)
        assert plan.replication_factor == expected
        assert problems == []

    def test_explicit_replication_factor_wins(self) -> None:
        plan, _ = plan_topic(topic_state("a", rf=3), "a", None, TARGET, 5)
        assert plan.replication_factor == 5

    def test_new_topic(self) -> None:
        source = topic_state(
            "orders",
            2,
            configs={"cleanup.policy": "compact", "min.insync.replicas": "2"},
            earliest={0: 3, 1: 0},
            latest={0: 10, 1: 0},
        )
        plan, problems = plan_topic(source, "eu.orders", None, TARGET, None)
        assert problems == []
        assert plan.create
        assert (plan.source_topic, plan.target_topic) == ("orders", "eu.orders")
        # The configs the compatibility check compares, and what decides which records the topic keeps, are set on
        # created topics (at the source's effective values) unless the target's brokers give them anyway.
        assert plan.configs == {
            "cleanup.policy": "compact",
            "max.message.bytes": str(KAFKA_DEFAULT_MAX_MESSAGE_BYTES),
            "message.timestamp.type": "CreateTime",
            "delete.retention.ms": "86400000",
            "min.compaction.lag.ms": "0",
            "max.compaction.lag.ms": "9223372036854775807",
        }
        assert plan.skipped_configs == {"min.insync.replicas": EXCLUDED_CONFIGS["min.insync.replicas"]}
        assert [(p.partition, p.start, p.end, p.target_start) for p in plan.partitions] == [(0, 3, 10, 0), (1, 0, 0, 0)]
        assert plan.offset_span == 7
        assert plan.warnings == (
            "replication factor 2 on the target, 3 on the source (capped by the target's 2 brokers)",
        )

    def test_existing_compatible_topic(self) -> None:
        source = topic_state("a", 2, rf=3, earliest=0, latest=10)
        existing = topic_state("b", 2, rf=1, earliest=5, latest=5)
        plan, problems = plan_topic(source, "b", existing, TARGET, 2)
        assert problems == []
        assert not plan.create
        assert plan.replication_factor == 1  # an existing topic keeps its own
        assert [p.target_start for p in plan.partitions] == [5, 5]

    def test_existing_incompatible_topic_returns_problems(self) -> None:
        plan, problems = plan_topic(topic_state("a", 3), "b", topic_state("b", 1, latest=0), TARGET, None)
        assert len(problems) == 1 and "'b' has 1 partition but" in problems[0]
        assert not plan.create

    def test_extra_target_partitions_warn(self) -> None:
        plan, problems = plan_topic(topic_state("a", 2), "b", topic_state("b", 4, latest=0), TARGET, None)
        assert problems == []
        assert any("4 partitions, source 2" in w for w in plan.warnings)

    def test_log_append_time_warnings(self) -> None:
        source = topic_state("a", configs={"message.timestamp.type": "LogAppendTime"})
        existing = topic_state("b", configs={"message.timestamp.type": "LogAppendTime"}, latest=0)
        plan, _ = plan_topic(source, "b", existing, TARGET, None)
        assert any(w.startswith("source topic uses LogAppendTime") for w in plan.warnings)
        assert any(w.startswith("target topic uses LogAppendTime") for w in plan.warnings)
        assert "message.timestamp.type" in plan.skipped_configs

    def test_ledger_positions_drive_ranges_and_allow_own_records(self) -> None:
        source = topic_state("a", 2, earliest=0, latest=20)
        existing = topic_state("b", 2, latest=8)
        positions = {0: Position(8, 8, "checkpoint"), 1: Position(20, 8, "checkpoint")}
        plan, problems = plan_topic(source, "b", existing, TARGET, None, positions)
        assert problems == []
        assert [(p.start, p.end, p.target_start, p.origin) for p in plan.partitions] == [
            (8, 20, 8, "checkpoint"),
            (20, 20, 8, "checkpoint"),
        ]


def test_raised_broker_level_record_limit_travels_to_the_new_target_topic() -> None:
    from kafka_migration.model.plan import ClusterInfo
    from kafka_migration.model.state import ConfigValue, TopicState
    from kafka_migration.run.topics import plan_topic

    # Apache Kafka reports the effective limit with a broker source when the topic does not override it.
    source = TopicState("big", 1, 1, {"max.message.bytes": ConfigValue("5242880", set_on_topic=False)}, {0: 0}, {0: 3})
    plan, problems = plan_topic(source, "big", None, ClusterInfo("target", "t:9092", "tgt", 1), None)
    assert problems == []
    assert plan.configs == {
        "cleanup.policy": "delete",
        "max.message.bytes": "5242880",
        "message.timestamp.type": "CreateTime",
        "retention.ms": "604800000",
        "retention.bytes": "-1",
    }
    # An existing target topic keeps its configs; the plan still sizes the copy's producer for the largest records.
    existing = TopicState("big", 1, 1, {"max.message.bytes": ConfigValue("8388608", set_on_topic=True)}, {0: 0}, {0: 0})
    plan, problems = plan_topic(source, "big", existing, ClusterInfo("target", "t:9092", "tgt", 1), None)
    assert problems == [] and plan.configs == {"max.message.bytes": "5242880"}
    assert plan.slices(include_empty=True)[0].max_message_bytes == 5242880


def test_an_existing_target_that_keeps_less_is_refused_unless_accepted() -> None:
    from kafka_migration.model.plan import ClusterInfo
    from kafka_migration.model.state import ConfigValue, TopicState
    from kafka_migration.run.topics import plan_topic

    month = {"retention.ms": ConfigValue("2592000000", set_on_topic=False, origin="STATIC_BROKER_CONFIG")}
    source = TopicState("orders", 1, 1, month, {0: 0}, {0: 3})
    existing = TopicState("orders", 1, 1, {}, {0: 0}, {0: 0})  # Kafka's default: 7 days
    target = ClusterInfo("target", "t:9092", "tgt", 1)
    _, problems = plan_topic(source, "orders", existing, target, None)
    (problem,) = problems
    assert "keeps less than source topic 'orders': retention.ms is 7 days on the target (604800000) but 30 days" in (
        problem
    )
    assert "--add-config retention.ms=2592000000" in problem and "--accept-target-retention" in problem
    plan, problems = plan_topic(source, "orders", existing, target, None, accept_less=True)
    assert problems == []
    assert any("ACCEPTED (--accept-target-retention)" in w for w in plan.warnings)
    assert plan.config_decisions["retention.ms"].startswith("ACCEPTED (--accept-target-retention)")
    # A target that keeps more (no limit) is never refused.
    more = TopicState("orders", 1, 1, {"retention.ms": ConfigValue("-1", set_on_topic=True)}, {0: 0}, {0: 0})
    assert plan_topic(source, "orders", more, target, None)[1] == []


def test_the_plan_says_where_the_replication_factors_differ() -> None:
    from kafka_migration.model.plan import ClusterInfo
    from kafka_migration.model.state import TopicState
    from kafka_migration.run.topics import plan_topic

    source = TopicState("orders", 1, 3, {}, {0: 0}, {0: 3})
    one_broker = ClusterInfo("target", "t:9092", "tgt", 1)
    plan, _ = plan_topic(source, "orders", None, one_broker, None)
    assert plan.replication_factor == 1
    assert "replication factor 1 on the target, 3 on the source (capped by the target's 1 broker)" in plan.warnings
    three = ClusterInfo("target", "t:9092", "tgt", 3)
    assert plan_topic(source, "orders", None, three, None)[0].warnings == ()  # the same: nothing said
    given, _ = plan_topic(source, "orders", None, three, 2)
    assert "replication factor 2 on the target, 3 on the source (as given (--replication-factor))" in given.warnings
