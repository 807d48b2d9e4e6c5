"""kafka_migration.run.topic_configs: which configs a target topic gets, on recorded Apache Kafka answers.

Apache Kafka's DescribeConfigs of a topic lists every topic config: defaults labelled DEFAULT_CONFIG,
broker-level ones STATIC_BROKER_CONFIG / DYNAMIC_BROKER_CONFIG / DYNAMIC_DEFAULT_BROKER_CONFIG, and
the ones set on the topic DYNAMIC_TOPIC_CONFIG (``set_on_topic=True``). The property that matters: a
topic created from the decision passes the compatibility check of the next run. The same answers
from real brokers are in tests/integration/test_config_sync.py.
"""

from __future__ import annotations

import pytest

from kafka_migration.model.state import KAFKA_DEFAULT_MAX_MESSAGE_BYTES, ConfigValue, TopicState
from kafka_migration.run.retention import human
from kafka_migration.run.topic_configs import (
    AT_TARGET_DEFAULT,
    COMPARED_CONFIGS,
    EFFECTIVE_VALUE,
    KEEPS_AS_SOURCE,
    KEEPS_AT_LEAST,
    KEPT_ON_TARGET,
    NOT_COPIED,
    PINNED_CREATE_TIME,
    SET_ON_TOPIC,
    SIZES_PRODUCER,
    TARGET_DEFAULTS,
    config_drift,
    decide_configs,
    target_defaults,
)
from kafka_migration.run.topics import compatibility_problems
from tests.leaks import leaked

# Apache Kafka 3.x, `kafka-configs --describe --all` of a topic with nothing set on it.
APACHE_DEFAULTS = {
    "cleanup.policy": "delete",
    "compression.type": "producer",
    "delete.retention.ms": "86400000",
    "file.delete.delay.ms": "60000",
    "flush.messages": "9223372036854775807",
    "flush.ms": "9223372036854775807",
    "follower.replication.throttled.replicas": "",
    "index.interval.bytes": "4096",
    "leader.replication.throttled.replicas": "",
    "local.retention.bytes": "-2",
    "local.retention.ms": "-2",
    "max.compaction.lag.ms": "9223372036854775807",
    "max.message.bytes": "1048588",
    "message.downconversion.enable": "true",
    "message.format.version": "3.0-IV1",
    "message.timestamp.difference.max.ms": "9223372036854775807",
    "message.timestamp.type": "CreateTime",
    "min.cleanable.dirty.ratio": "0.5",
    "min.compaction.lag.ms": "0",
    "min.insync.replicas": "1",
    "preallocate": "false",
    "remote.storage.enable": "false",
    "retention.bytes": "-1",
    "retention.ms": "604800000",
    "segment.bytes": "1073741824",
    "segment.index.bytes": "10485760",
    "segment.jitter.ms": "0",
    "segment.ms": "604800000",
    "unclean.leader.election.enable": "false",
}


def apache_answer(overrides: dict[str, str], broker: dict[str, str] | None = None) -> dict[str, ConfigValue]:
    """Every entry; ``overrides`` labelled as set on the topic, ``broker`` as broker-level settings."""
    answer = {
        name: ConfigValue(value, set_on_topic=False) for name, value in {**APACHE_DEFAULTS, **(broker or {})}.items()
    }
    answer.update({name: ConfigValue(value, set_on_topic=True) for name, value in overrides.items()})
    return answer


def state(name: str, configs: dict[str, ConfigValue]) -> TopicState:
    return TopicState(name, 2, 1, configs, {0: 0, 1: 0}, {0: 5, 1: 5})


COMPACTED = {"cleanup.policy": "compact", "max.message.bytes": "2097152", "min.insync.replicas": "2"}


class TestDecideConfigs:
    def test_apache_answer_copies_what_is_set_on_the_topic_and_pins_what_the_check_compares(self) -> None:
        decision = decide_configs(state("t", apache_answer({"cleanup.policy": "compact", "retention.ms": "1000"})))
        assert decision.configs == {
            "cleanup.policy": "compact",
            "max.message.bytes": "1048588",  # a default on the source, set because the check compares it
            "message.timestamp.type": "CreateTime",
            "retention.ms": "1000",
            # What decides which records a compacted topic keeps, at the source's effective values: the target's
            # defaults are not known here (None), so they are set.
            "delete.retention.ms": "86400000",
            "min.compaction.lag.ms": "0",
            "max.compaction.lag.ms": "9223372036854775807",
        }
        assert decision.how == {
            "cleanup.policy": SET_ON_TOPIC,
            "max.message.bytes": EFFECTIVE_VALUE,
            "message.timestamp.type": PINNED_CREATE_TIME,
            "retention.ms": SET_ON_TOPIC,
            "delete.retention.ms": KEEPS_AS_SOURCE,
            "min.compaction.lag.ms": KEEPS_AS_SOURCE,
            "max.compaction.lag.ms": KEEPS_AS_SOURCE,
        }
        assert decision.skipped == {}

    def test_apache_answer_with_a_raised_broker_limit_carries_the_effective_value(self) -> None:
        answer = apache_answer({}, broker={"max.message.bytes": "5242880"})
        assert decide_configs(state("t", answer)).configs["max.message.bytes"] == "5242880"

    def test_nothing_set_still_sets_the_compared_configs_to_the_source_effective_values(self) -> None:
        decision = decide_configs(state("t", apache_answer({})))
        assert decision.configs == {
            "cleanup.policy": "delete",
            "max.message.bytes": str(KAFKA_DEFAULT_MAX_MESSAGE_BYTES),
            "message.timestamp.type": "CreateTime",
            "retention.ms": "604800000",
            "retention.bytes": "-1",
        }
        assert {decision.how[name] for name in COMPARED_CONFIGS} == {EFFECTIVE_VALUE}
        assert decision.how["retention.ms"] == decision.how["retention.bytes"] == KEEPS_AS_SOURCE

    def test_broker_level_values_are_not_copied_but_what_the_source_keeps_travels(self) -> None:
        # Values the source's brokers give every topic (static, dynamic, cluster default) are not the topic's,
        # except what decides which records it keeps: a 30-day broker retention must not become the target's 7.
        answer = apache_answer({}, broker={"retention.ms": "2592000000", "compression.type": "gzip"})
        decision = decide_configs(state("t", answer))
        assert "compression.type" not in decision.configs
        assert decision.configs["retention.ms"] == "2592000000" and decision.how["retention.ms"] == KEEPS_AS_SOURCE

    def test_excluded_configs_are_skipped_with_their_reason(self) -> None:
        decision = decide_configs(state("t", apache_answer({"min.insync.replicas": "2", "retention.ms": "5"})))
        assert decision.skipped == {"min.insync.replicas": "depends on the target's replication factor"}
        assert decision.how["min.insync.replicas"].startswith(NOT_COPIED) and decision.configs["retention.ms"] == "5"

    def test_secrets_and_read_only_entries_never_travel(self) -> None:
        answer = {
            **apache_answer({"cleanup.policy": "compact"}),
            "segment.bytes": ConfigValue("1024", set_on_topic=True, read_only=True),
            "some.password": ConfigValue("hunter2", set_on_topic=True, sensitive=True),
        }
        decision = decide_configs(state("t", answer))
        assert "segment.bytes" not in decision.configs and "some.password" not in decision.configs
        assert leaked("hunter2", str(decision)) == []

    def test_an_existing_target_is_not_changed_and_only_sizes_the_producer(self) -> None:
        source = state("t", apache_answer({"cleanup.policy": "compact", "max.message.bytes": "2097152"}))
        decision = decide_configs(source, state("t", apache_answer({"cleanup.policy": "compact"})))
        assert decision.configs == {"max.message.bytes": "2097152"}  # nothing claimed as copied
        kept = {
            name: KEEPS_AT_LEAST.format(here=human(name, value), there=human(name, value))
            for name, value in (
                ("delete.retention.ms", "86400000"),
                ("min.compaction.lag.ms", "0"),
                ("max.compaction.lag.ms", "9223372036854775807"),
            )
        }
        assert decision.how == {"cleanup.policy": KEPT_ON_TARGET, "max.message.bytes": SIZES_PRODUCER, **kept}
        small = decide_configs(state("t", apache_answer({"retention.ms": "5"})), state("t", apache_answer({})))
        assert small.configs == {}
        assert small.how["retention.ms"] == KEPT_ON_TARGET  # set on the source topic: drift says the rest
        assert small.how["retention.bytes"] == KEEPS_AT_LEAST.format(
            here="retention.bytes=-1 (no limit)", there="retention.bytes=-1 (no limit)"
        )


# What Apache Kafka's brokers answer for TARGET_DEFAULTS when nothing is configured.
KAFKA_BROKER_DEFAULTS = {
    "log.cleanup.policy": "delete",
    "message.max.bytes": "1048588",
    "log.message.timestamp.type": "CreateTime",
    "log.retention.hours": "168",  # log.retention.ms and .minutes answer null
    "log.retention.bytes": "-1",
    "log.cleaner.delete.retention.ms": "86400000",
    "log.cleaner.min.compaction.lag.ms": "0",
    "log.cleaner.max.compaction.lag.ms": "9223372036854775807",
}


class TestTargetDefaults:
    def test_what_the_target_gives_a_new_topic_anyway_is_not_set(self) -> None:
        decision = decide_configs(
            state("t", apache_answer({"retention.ms": "5"})), None, target_defaults(KAFKA_BROKER_DEFAULTS)
        )
        assert decision.configs == {"retention.ms": "5"}
        assert decision.how == {
            "cleanup.policy": AT_TARGET_DEFAULT.format(value="cleanup.policy=delete", broker="log.cleanup.policy"),
            "max.message.bytes": AT_TARGET_DEFAULT.format(
                value="max.message.bytes=1048588", broker="message.max.bytes"
            ),
            "message.timestamp.type": AT_TARGET_DEFAULT.format(
                value="message.timestamp.type=CreateTime", broker="log.message.timestamp.type"
            ),
            "retention.ms": SET_ON_TOPIC,
            "retention.bytes": AT_TARGET_DEFAULT.format(value="retention.bytes=-1", broker="log.retention.bytes"),
        }

    def test_a_config_set_on_the_source_topic_travels_even_at_the_targets_default(self) -> None:
        source = state("t", apache_answer({"cleanup.policy": "delete"}))
        decision = decide_configs(source, None, target_defaults(KAFKA_BROKER_DEFAULTS))
        assert decision.configs == {"cleanup.policy": "delete"} and decision.how["cleanup.policy"] == SET_ON_TOPIC

    def test_a_target_default_other_than_wanted_is_overridden_on_the_topic(self) -> None:
        brokers = {
            "log.cleanup.policy": "compact",
            "message.max.bytes": "524288",
            "log.message.timestamp.type": "LogAppendTime",
        }
        decision = decide_configs(state("t", apache_answer({})), None, target_defaults(brokers))
        assert decision.configs == {
            "cleanup.policy": "delete",
            "max.message.bytes": "1048588",
            "message.timestamp.type": "CreateTime",
            "retention.ms": "604800000",  # the target's brokers: unknown
            "retention.bytes": "-1",
        }
        assert decision.how["message.timestamp.type"] == PINNED_CREATE_TIME
        assert decision.how["cleanup.policy"] == decision.how["max.message.bytes"] == EFFECTIVE_VALUE

    def test_a_policy_list_is_the_same_in_any_order(self) -> None:
        source = state("t", apache_answer({}, broker={"cleanup.policy": "compact, delete"}))
        brokers = {**KAFKA_BROKER_DEFAULTS, "log.cleanup.policy": "delete,compact"}
        assert "cleanup.policy" not in decide_configs(source, None, target_defaults(brokers)).configs

    def test_unknown_defaults_are_set_as_before(self) -> None:
        assert target_defaults(None) == {}
        partial = target_defaults({"log.cleanup.policy": "delete"})  # brokers that disagree on the others
        assert partial == {"cleanup.policy": "delete"}
        decision = decide_configs(state("t", apache_answer({})), None, partial)
        assert set(decision.configs) == {
            "max.message.bytes",
            "message.timestamp.type",
            "retention.ms",
            "retention.bytes",
        }
        assert set(TARGET_DEFAULTS) == set(COMPARED_CONFIGS) | {"message.timestamp.type"}


def test_drift_is_every_config_set_on_either_topic_whose_values_differ() -> None:
    source = state("t", apache_answer({"retention.ms": "3600000", "segment.ms": "60000", "min.insync.replicas": "2"}))
    created = decide_configs(state("t", apache_answer({"retention.ms": "7200000", "segment.ms": "60000"}))).configs
    target = state("t", apache_answer({**created, "flush.ms": "1000"}))
    assert config_drift(source, target) == {
        "retention.ms": ("3600000", "7200000"),  # changed on the source after the target was created
        "flush.ms": ("9223372036854775807", "1000"),  # set on the target only
    }  # equal values, excluded (min.insync.replicas) and pinned (message.timestamp.type) ones are no drift


def _created_target(configs: dict[str, str], brokers: dict[str, str] | None = None) -> TopicState:
    """The target topic as Apache Kafka describes it after creating it with ``configs`` on brokers configured
    with ``brokers`` (TARGET_DEFAULTS names)."""
    given = {name: brokers[broker] for name, broker in TARGET_DEFAULTS.items() if brokers and broker in brokers}
    return TopicState("t", 2, 1, apache_answer(configs, broker=given), {0: 0, 1: 0}, {0: 0, 1: 0})


@pytest.mark.parametrize(
    "source_answer",
    [
        apache_answer({}),
        apache_answer({"cleanup.policy": "compact,delete", "max.message.bytes": "2097152"}),
        apache_answer({}, broker={"max.message.bytes": "5242880"}),
        apache_answer(COMPACTED),
    ],
    ids=["defaults", "compacted", "broker-limit", "compacted-min-isr"],
)
@pytest.mark.parametrize(
    "brokers",
    [
        None,  # not readable: everything compared is set
        KAFKA_BROKER_DEFAULTS,
        {
            "log.cleanup.policy": "compact",
            "message.max.bytes": "5242880",
            "log.message.timestamp.type": "LogAppendTime",
        },
    ],
    ids=["unknown", "kafka-defaults", "other-defaults"],
)
def test_a_created_topic_passes_the_next_runs_compatibility_check(
    source_answer: dict[str, ConfigValue], brokers: dict[str, str] | None
) -> None:
    """The rule that creates and the rule that checks agree: the pipeline never refuses its own output, and the
    created topic keeps the copied timestamps, whatever the target's brokers give a new topic."""
    source = state("t", source_answer)
    decision = decide_configs(source, None, target_defaults(brokers))
    created = _created_target(decision.configs, brokers)
    assert compatibility_problems(source, created) == []
    assert created.config("message.timestamp.type") == "CreateTime"


class TestWhatTheTargetKeeps:
    def test_the_broker_synonyms_of_the_time_retention_resolve_in_kafkas_order(self) -> None:
        assert target_defaults({"log.retention.hours": "720"})["retention.ms"] == "2592000000"
        assert target_defaults({"log.retention.minutes": "90", "log.retention.hours": "720"})["retention.ms"] == str(
            90 * 60_000
        )
        assert target_defaults({"log.retention.ms": "-1", "log.retention.hours": "1"})["retention.ms"] == "-1"

    def test_a_target_whose_brokers_keep_less_gets_the_sources_effective_retention(self) -> None:
        # The case of the issue: the source's brokers keep 30 days, the target's Kafka's default 7.
        source = state("t", apache_answer({}, broker={"retention.ms": "2592000000"}))
        decision = decide_configs(source, None, target_defaults(KAFKA_BROKER_DEFAULTS))
        assert decision.configs == {"retention.ms": "2592000000"}
        assert decision.how["retention.ms"] == KEEPS_AS_SOURCE

    def test_a_target_whose_brokers_keep_as_much_gets_nothing_set(self) -> None:
        source = state("t", apache_answer({}))
        assert decide_configs(source, None, target_defaults(KAFKA_BROKER_DEFAULTS)).configs == {}
