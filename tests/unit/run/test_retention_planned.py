"""kafka_migration.run.retention as planning uses it: what an existing target topic keeps, compared with the
source by the value in force on each side (set on the topic, or given by the brokers), under the cleanup policy as
Kafka reads it."""

from __future__ import annotations

from kafka_migration.model.plan import ClusterInfo
from kafka_migration.model.state import ConfigValue, TopicState
from kafka_migration.run.retention import Shortfall, retention_ms, shortfalls
from kafka_migration.run.topics import plan_topic

DAY_MS = 86_400_000
TARGET = ClusterInfo("target", "t:9092", "tgt", 1)


def topic(configs: dict[str, ConfigValue]) -> TopicState:
    return TopicState("orders", 1, 1, configs, {0: 0}, {0: 0})


def on_topic(value: str) -> ConfigValue:
    return ConfigValue(value, set_on_topic=True, origin="DYNAMIC_TOPIC_CONFIG")


def from_brokers(value: str) -> ConfigValue:
    """What Apache Kafka reports for a config the topic does not set: the brokers' value, not set on the topic."""
    return ConfigValue(value, set_on_topic=False, origin="STATIC_BROKER_CONFIG")


def test_a_policy_list_written_with_a_space_still_compares_the_time_retention() -> None:
    """Kafka accepts ``compact, delete``: such a topic deletes by time, so a target that keeps less is refused."""
    source = topic({"cleanup.policy": on_topic("compact, delete"), "retention.ms": on_topic(str(30 * DAY_MS))})
    target = topic({"cleanup.policy": on_topic("compact, delete"), "retention.ms": on_topic(str(DAY_MS))})
    assert Shortfall("retention.ms", str(30 * DAY_MS), str(DAY_MS)) in shortfalls(source, target)
    _, problems = plan_topic(source, "orders", target, TARGET, None)
    assert any("retention.ms is 1 day on the target (86400000) but 30 days on the source" in p for p in problems)
    assert retention_ms(source) == 30 * DAY_MS  # and records older than that are not copied


def test_a_target_whose_brokers_keep_less_is_compared_though_its_topic_sets_nothing() -> None:
    """The target topic sets no retention.ms, its brokers delete after a minute: that minute is what it keeps."""
    source = topic({"retention.ms": ConfigValue("604800000", set_on_topic=False, origin="DEFAULT_CONFIG")})
    target = topic({"retention.ms": from_brokers("60000")})
    assert shortfalls(source, target) == [Shortfall("retention.ms", "604800000", "60000")]
    assert retention_ms(target) == 60_000
    _, problems = plan_topic(source, "orders", target, TARGET, None)
    (problem,) = problems
    assert "retention.ms is 1 minute on the target (60000) but 7 days on the source (604800000)" in problem
