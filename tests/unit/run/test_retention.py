"""kafka_migration.run.retention: which configs decide what a topic keeps, compared by the value in force, and how
they read in the plan and the refusal (how they travel with a created topic: test_topic_configs.py)."""

from __future__ import annotations

import pytest

from kafka_migration.model.state import ConfigValue, TopicState
from kafka_migration.run.retention import (
    KEEP_CONFIGS,
    UNLIMITED,
    Shortfall,
    amount,
    applicable,
    human,
    keeps_less,
    new_topic_defaults,
    policies,
    readable,
    retention_ms,
    shortfalls,
)

DAY = 86_400_000


def topic(**configs: str) -> TopicState:
    """A topic whose configs the broker reports as given (``cleanup_policy`` for cleanup.policy, _ for .)."""
    values = {name.replace("_", "."): ConfigValue(value, set_on_topic=True) for name, value in configs.items()}
    return TopicState("orders", 1, 1, values, {0: 0}, {0: 10})


@pytest.mark.parametrize(
    ("unit", "value", "shown"),
    [
        ("ms", "0", "0 s"),
        ("ms", "999", "0.999 s"),
        ("ms", "59999", "59.999 s"),
        ("ms", "60000", "1 minute"),
        ("ms", "90000", "1.5 minutes"),
        ("ms", "3540000", "59 minutes"),
        ("ms", "3600000", "1 hour"),
        ("ms", "7200000", "2 hours"),
        ("ms", str(DAY), "1 day"),
        ("ms", str(DAY * 3 // 2), "1.5 days"),
        ("ms", str(DAY * 7), "7 days"),
        ("ms", str(DAY * 1500), "1,500 days"),
        ("ms", "-1", "no limit"),
        ("ms", "-2", "no limit"),
        ("ms", str(2**62), "no limit"),
        ("ms", "9223372036854775807", "no limit"),  # max.compaction.lag.ms's default
        ("bytes", "0", "0 bytes"),
        ("bytes", "1023", "1,023 bytes"),
        ("bytes", "1024", "1 KiB"),
        ("bytes", "1536", "1.5 KiB"),
        ("bytes", str(2**20 - 1), "1.02e+03 KiB"),
        ("bytes", str(2**20), "1 MiB"),
        ("bytes", str(3 * 2**30), "3 GiB"),
        ("bytes", str(2**40), "1 TiB"),
        ("bytes", str(2**50), "1.02e+03 TiB"),
        ("bytes", "-1", "no limit"),
    ],
)
def test_values_read_as_people_read_them(unit: str, value: str, shown: str) -> None:
    assert readable(unit, value) == shown


def test_a_keep_config_is_shown_as_set_and_as_read_other_configs_as_set() -> None:
    assert human("retention.ms", "2592000000") == "retention.ms=2592000000 (30 days)"
    assert human("retention.bytes", "-1") == "retention.bytes=-1 (no limit)"
    assert human("retention.bytes", "1024") == "retention.bytes=1024 (1 KiB)"  # in its own unit
    assert human("segment.ms", "60000") == "segment.ms=60000"


def test_any_negative_value_is_no_limit_and_only_a_lower_one_keeps_less() -> None:
    assert amount("-1") == amount("-5") == UNLIMITED
    assert amount("0") == 0.0 and amount("7") == 7.0
    assert keeps_less("5", "6") and not keeps_less("6", "6") and not keeps_less("7", "6")
    assert keeps_less("0", "-1") and not keeps_less("-1", "0") and not keeps_less("-1", "-1")


def test_the_cleanup_policy_decides_which_configs_delete_anything() -> None:
    assert policies(topic()) == {"delete"}  # Kafka's default
    assert policies(topic(cleanup_policy="compact, delete")) == {"compact", "delete"}
    names = [c.name for c in applicable(topic(cleanup_policy="compact"))]
    assert names == ["delete.retention.ms", "min.compaction.lag.ms", "max.compaction.lag.ms"]
    assert [c.name for c in applicable(topic())] == ["retention.ms", "retention.bytes"]
    assert len(applicable(topic(cleanup_policy="delete,compact"))) == len(KEEP_CONFIGS)


def test_a_new_topic_takes_the_first_broker_synonym_in_its_unit_and_skips_what_cannot_be_read() -> None:
    assert new_topic_defaults(None) == {}
    assert new_topic_defaults({"log.retention.hours": "2", "log.retention.bytes": "-1"}) == {
        "retention.ms": "7200000",
        "retention.bytes": "-1",
    }
    assert new_topic_defaults({"log.retention.minutes": "3", "log.retention.hours": "2"}) == {"retention.ms": "180000"}
    assert new_topic_defaults({"log.retention.ms": "-2", "log.retention.hours": "2"}) == {"retention.ms": "-1"}
    # A value that is not a number, or missing, is passed over for the next synonym; none left: no default.
    assert new_topic_defaults({"log.retention.ms": "soon", "log.retention.hours": "1"}) == {"retention.ms": "3600000"}
    assert new_topic_defaults({"log.retention.ms": "X1", "log.retention.hours": "1"}) == {"retention.ms": "3600000"}
    assert new_topic_defaults({"log.retention.ms": " ", "log.cleaner.min.compaction.lag.ms": "0"}) == {
        "min.compaction.lag.ms": "0"
    }
    every = {name: "1" for c in KEEP_CONFIGS.values() for name, _ in c.broker}
    assert sorted(new_topic_defaults(every)) == sorted(KEEP_CONFIGS)


def test_a_target_that_keeps_less_under_the_sources_policy_falls_short_by_effective_value() -> None:
    source = topic(retention_ms=str(DAY * 30), retention_bytes="-1")
    assert shortfalls(source, topic(retention_ms=str(DAY * 30), retention_bytes="-1")) == []
    assert shortfalls(source, topic(retention_ms=str(DAY * 30))) == []  # Kafka's default retention.bytes: -1
    found = shortfalls(source, topic(retention_bytes=str(2**30)))  # and Kafka's default retention.ms: 7 days
    assert found == [
        Shortfall("retention.ms", str(DAY * 30), "604800000"),
        Shortfall("retention.bytes", "-1", str(2**30)),
    ]
    assert found[0].describe() == (
        "retention.ms is 7 days on the target (604800000) but 30 days on the source (2592000000): records older "
        "than that are deleted"
    )
    assert found[1].describe() == (
        "retention.bytes is 1 GiB on the target (1073741824) but no limit on the source (-1): a partition's oldest "
        "records beyond that size are deleted"
    )
    less = shortfalls(topic(retention_bytes=str(2**31)), topic(retention_bytes=str(2**30)))
    assert [x.describe() for x in less if x.name == "retention.bytes"] == [
        "retention.bytes is 1 GiB on the target (1073741824) but 2 GiB on the source (2147483648): a partition's "
        "oldest records beyond that size are deleted"
    ]
    # A compacted source: only the compaction configs count, a shorter retention.ms on the target does not.
    compacted = topic(cleanup_policy="compact", min_compaction_lag_ms="60000")
    assert shortfalls(compacted, topic(cleanup_policy="compact", retention_ms="1")) == [
        Shortfall("min.compaction.lag.ms", "60000", "0")
    ]


def test_the_time_retention_that_deletes_records() -> None:
    assert retention_ms(topic()) == 604800000  # Kafka's default
    assert retention_ms(topic(retention_ms="3600000")) == 3600000
    assert retention_ms(topic(retention_ms="0")) == 0
    assert retention_ms(topic(retention_ms="-1")) is None  # no limit
    assert retention_ms(topic(cleanup_policy="compact", retention_ms="5")) is None  # compaction deletes by key
    assert retention_ms(topic(cleanup_policy="compact,delete", retention_ms="5")) == 5
