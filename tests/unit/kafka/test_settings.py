"""kafka_migration.kafka.settings: the promises under "nothing doubled" that the copy's producer keeps.

Idempotence, acks=all and at most 5 requests in flight per connection: set by the product, and a user setting that
would break one is refused with one ConfigurationError naming it and the way out, before any client exists. Each
case plants one such setting, under each of librdkafka's names for it. No broker: nothing connects.
"""

from __future__ import annotations

from typing import Any

import pytest

from kafka_migration.exceptions import ConfigurationError
from kafka_migration.kafka.settings import (
    MAX_IN_FLIGHT,
    PRODUCER_PROMISES,
    broken_promises,
    check_client_settings,
    check_producer_promises,
    producer_settings,
)
from kafka_migration.model.config import ClusterConfig

PROMISED = {"enable.idempotence": True, "acks": "all", "max.in.flight.requests.per.connection": MAX_IN_FLIGHT}

BREAKING = [
    ("enable.idempotence", False),
    ("enable.idempotence", "false"),
    ("enable.idempotence", "f"),
    ("enable.idempotence", 0),
    ("enable.idempotence", "0"),
    ("acks", 1),
    ("acks", "1"),
    ("acks", 0),
    ("acks", "most"),  # not a value librdkafka takes either: refused here, by name
    ("request.required.acks", 1),
    ("max.in.flight.requests.per.connection", 6),
    ("max.in.flight.requests.per.connection", "1000"),
    ("max.in.flight.requests.per.connection", 0),
    ("max.in.flight", 6),
    ("max.in.flight", "many"),
    ("max.in.flight", 2.5),
]

KEEPING = [
    ("enable.idempotence", True),
    ("enable.idempotence", "true"),
    ("enable.idempotence", "TRUE"),
    ("enable.idempotence", "t"),
    ("enable.idempotence", 1),
    ("enable.idempotence", "1"),
    ("acks", "all"),
    ("acks", "ALL"),
    ("acks", -1),
    ("acks", "-1"),
    ("request.required.acks", "all"),
    ("max.in.flight.requests.per.connection", 5),
    ("max.in.flight.requests.per.connection", "1"),
    ("max.in.flight", 3),
    ("max.in.flight", "5.0"),
]


def promised(settings: dict[str, Any]) -> dict[str, Any]:
    return {key: settings[key] for key in PROMISED}


def test_the_copy_producer_is_idempotent_with_acks_all_and_at_most_five_requests_in_flight() -> None:
    assert promised(producer_settings({}, 1000)) == PROMISED
    assert promised(producer_settings({"linger.ms": 5, "acks": -1}, 1000)) == PROMISED


@pytest.mark.parametrize(("key", "value"), BREAKING)
def test_a_setting_that_breaks_a_promise_is_refused_by_name_with_the_way_out(key: str, value: Any) -> None:
    with pytest.raises(ConfigurationError) as refused:
        producer_settings({key: value}, 1000, "target", "--target-config t.json")
    message = str(refused.value)
    assert f"The target cluster setting {key}={value!r} (allowed: " in message
    assert "Remove it from --target-config t.json" in message
    assert "enable.idempotence=true, acks=all, max.in.flight.requests.per.connection=5" in message
    assert "\n" not in message


@pytest.mark.parametrize(("key", "value"), KEEPING)
def test_a_setting_that_keeps_the_promises_is_taken(key: str, value: Any) -> None:
    settings = producer_settings({key: value}, 1000)
    assert settings["enable.idempotence"] is True
    assert settings["acks"] == "all"
    assert 1 <= settings["max.in.flight.requests.per.connection"] <= MAX_IN_FLIGHT
    assert broken_promises({key: value}) == []


def test_each_promise_under_one_name_and_a_lower_bound_on_requests_in_flight_is_kept() -> None:
    settings = producer_settings({"request.required.acks": -1, "max.in.flight": "2"}, 1000)
    assert "request.required.acks" not in settings and "max.in.flight" not in settings
    assert promised(settings) == {**PROMISED, "max.in.flight.requests.per.connection": 2}
    # Two names for one setting: librdkafka applies the later one, and so does the product.
    two = producer_settings({"max.in.flight": 1, "max.in.flight.requests.per.connection": 4}, 1000)
    assert two["max.in.flight.requests.per.connection"] == 4


def test_every_broken_promise_is_named_in_one_refusal() -> None:
    with pytest.raises(ConfigurationError) as refused:
        producer_settings({"enable.idempotence": False, "acks": 1, "max.in.flight": 10}, 1000, "source")
    message = str(refused.value)
    assert message.startswith("The source cluster settings enable.idempotence=False (allowed: true; ")
    assert "; acks=1 (allowed: all or -1; " in message
    assert "; max.in.flight=10 (allowed: 1 to 5; " in message
    assert "Remove them from the source cluster settings:" in message


def test_settings_a_producer_is_built_with_must_name_every_promise() -> None:
    """The check the copy makes on the settings it builds its producer with: a promise left to librdkafka's
    default (enable.idempotence is false there) is broken too."""
    check_producer_promises(PROMISED, required=True)
    for promise in PRODUCER_PROMISES:
        without = {key: value for key, value in PROMISED.items() if key != promise.setting}
        assert broken_promises(without) == []
        with pytest.raises(ConfigurationError, match=f"setting {promise.setting} unset"):
            check_producer_promises(without, required=True)


@pytest.mark.parametrize(("key", "value"), [("enable.idempotence", "false"), ("acks", "1"), ("max.in.flight", 100)])
def test_client_settings_are_refused_before_any_client_exists(
    key: str, value: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import confluent_kafka

    built: list[str] = []
    monkeypatch.setattr(confluent_kafka, "Producer", lambda *_: built.append("producer"))
    monkeypatch.setattr(confluent_kafka, "Consumer", lambda *_: built.append("consumer"))
    config = ClusterConfig("target", {"bootstrap.servers": "b:9092", key: value}, origin="connection 'kafka_target'")
    with pytest.raises(ConfigurationError, match=f"setting {key}=.* Remove it from connection 'kafka_target'"):
        check_client_settings(config)
    assert built == []


def test_client_settings_that_keep_the_promises_pass_librdkafka_itself() -> None:
    settings = {"bootstrap.servers": "b:9092", "enable.idempotence": "true", "acks": -1, "max.in.flight": 1}
    check_client_settings(ClusterConfig("target", settings))
