"""kafka_migration.kafka.settings: the promises under "nothing doubled" that the copy's producer keeps, the settings
every reader and writer gets, and how librdkafka's refusals and connection failures are told.

Idempotence, acks=all and at most 5 requests in flight per connection: set by the product, and a user setting that
would break one is refused with one ConfigurationError naming it and the way out, before any client exists. Each
case plants one such setting, under each of librdkafka's names for it. No broker: nothing connects.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Any

import pytest
from confluent_kafka import KafkaException

from kafka_migration.exceptions import ConfigurationError
from kafka_migration.kafka.settings import (
    DEFAULT_MESSAGE_TIMEOUT_MS,
    MAX_IN_FLIGHT,
    PRODUCER_PROMISES,
    READER_GROUP,
    _ConnectionWatch,
    _QuietRdkafkaLogger,
    broken_promises,
    check_client_settings,
    check_producer_promises,
    cluster_label,
    consumer_settings,
    delivery_timeout,
    producer_settings,
    refused_settings,
    stall_timeout,
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
    with pytest.raises(
        ConfigurationError, match=f"^The target cluster setting {key}=.* from connection 'kafka_target'"
    ):
        check_client_settings(config)
    assert built == []


def test_client_settings_that_keep_the_promises_pass_librdkafka_itself() -> None:
    settings = {"bootstrap.servers": "b:9092", "enable.idempotence": "true", "acks": -1, "max.in.flight": 1}
    check_client_settings(ClusterConfig("target", settings))


# --- what every client gets -------------------------------------------------------------------------------------


def test_the_readers_settings_in_full_the_users_under_what_correctness_needs() -> None:
    settings = consumer_settings({"fetch.wait.max.ms": 50, "enable.auto.commit": True, "group.id": "mine"})
    logger = settings.pop("logger")
    assert isinstance(logger, _QuietRdkafkaLogger)
    assert settings == {
        "queued.max.messages.kbytes": 16384,
        "fetch.wait.max.ms": 50,  # the user's
        "fetch.queue.backoff.ms": 10,
        "fetch.max.bytes": 16 * 1024 * 1024,
        "receive.message.max.bytes": 32 * 1024 * 1024,
        "socket.connection.setup.timeout.ms": 15000,
        # never the user's: a reader that commits, stores offsets, misses the end of a partition, reads aborted
        # records or silently starts elsewhere would break the verification
        "group.id": READER_GROUP,
        "enable.auto.commit": False,
        "enable.auto.offset.store": False,
        "enable.partition.eof": True,
        "isolation.level": "read_committed",
        "auto.offset.reset": "error",
    }


def test_the_defaults_a_user_may_change() -> None:
    assert consumer_settings({})["fetch.wait.max.ms"] == 10  # the end of a partition is seen after an empty fetch
    # a full prefetch queue postpones the next fetch this long, not librdkafka's second (docs/benchmarks-log.md)
    assert consumer_settings({})["fetch.queue.backoff.ms"] == 10
    assert consumer_settings({"fetch.queue.backoff.ms": 200})["fetch.queue.backoff.ms"] == 200
    assert producer_settings({}, 1)["linger.ms"] == 20


def test_the_writers_settings_in_full() -> None:
    settings = producer_settings({"linger.ms": 5}, 1_000_000)
    settings.pop("logger")
    assert settings == {
        "linger.ms": 5,  # the user's
        "batch.size": 1024 * 1024,
        "compression.type": "lz4",
        "queue.buffering.max.kbytes": 32768,
        "queue.buffering.max.messages": 100000,
        "socket.connection.setup.timeout.ms": 15000,
        "message.max.bytes": 1_000_000 + 1024,  # room for the largest record the topic allows, and its overhead
        "message.timeout.ms": DEFAULT_MESSAGE_TIMEOUT_MS,
        "enable.idempotence": True,
        "acks": "all",
        "max.in.flight.requests.per.connection": MAX_IN_FLIGHT,
    }


def test_a_larger_message_max_bytes_of_the_users_is_kept_and_a_bad_one_named() -> None:
    assert producer_settings({"message.max.bytes": "5000000"}, 1000)["message.max.bytes"] == 5_000_000
    assert producer_settings({"message.max.bytes": 10}, 1000)["message.max.bytes"] == 2024
    with pytest.raises(ValueError) as refused:
        producer_settings({"message.max.bytes": "big"}, 1000)
    assert str(refused.value) == 'Invalid value "big" for configuration property "message.max.bytes"'


def test_the_refusal_names_the_target_unless_told_which_cluster() -> None:
    for refuse in (
        lambda: check_producer_promises({"acks": 0}),
        lambda: producer_settings({"acks": 0}, 1),
    ):
        with pytest.raises(
            ConfigurationError, match=r"^The target cluster setting acks=0 .* the target cluster settings"
        ):
            refuse()


def test_the_writers_own_settings_are_checked_too(monkeypatch: pytest.MonkeyPatch) -> None:
    """Were a promise to set a value that breaks it (a bug in PRODUCER_PROMISES), producer_settings refuses what it
    built instead of returning it, naming the cluster and where its settings come from."""
    from kafka_migration.kafka import settings as module

    broken = dataclasses.replace(PRODUCER_PROMISES[0], value=False)
    monkeypatch.setattr(module, "PRODUCER_PROMISES", (broken, *PRODUCER_PROMISES[1:]))
    with pytest.raises(ConfigurationError) as refused:
        producer_settings({}, 1, "source", "--source-config s.json")
    assert str(refused.value).startswith("The source cluster setting enable.idempotence=False (allowed: true; ")
    assert "Remove it from --source-config s.json" in str(refused.value)


def test_librdkafkas_log_lines_go_to_debug(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG, logger="kafka_migration.librdkafka"):
        _QuietRdkafkaLogger().log(3, "%s|%s", "FAIL", "broker down")
    assert [(r.levelno, r.getMessage()) for r in caplog.records] == [(logging.DEBUG, "FAIL|broker down")]


class _Error:
    """A librdkafka error as the error callback and KafkaException carry it."""

    def __init__(self, name: str, text: str) -> None:
        self._name, self._text = name, text

    def name(self) -> str:
        return self._name

    def str(self) -> str:
        return self._text


def test_a_connection_watch_keeps_the_first_fatal_error_all_brokers_down_and_the_last_failure(
    caplog: pytest.LogCaptureFixture,
) -> None:
    watch = _ConnectionWatch()
    assert (watch.fatal, watch.all_down, watch.last_failure) == (None, False, None)
    with caplog.at_level(logging.DEBUG, logger="kafka_migration.librdkafka"):
        watch.log(3, "%s [%s]: %s", "FAIL", "b1", "Connection refused")
        watch.log(7, "%s: %s", "CONNECT", "b1")
    assert watch.last_failure == "Connection refused"
    assert caplog.messages == ["FAIL [b1]: Connection refused", "CONNECT: b1"]
    watch.on_error(_Error("_TRANSPORT", "b1: Disconnected"))
    assert (watch.fatal, watch.all_down, watch.last_failure) == (None, False, "b1: Disconnected")
    watch.on_error(_Error("_ALL_BROKERS_DOWN", "1/1 brokers are down"))
    assert (watch.all_down, watch.last_failure) == (True, "b1: Disconnected")
    watch.on_error(_Error("_SSL", "certificate verify failed"))
    watch.on_error(_Error("_AUTHENTICATION", "SASL authentication failed"))
    assert watch.fatal == "certificate verify failed"  # the first: what went wrong first
    assert watch.last_failure == "b1: Disconnected"


def test_librdkafkas_refusal_says_which_cluster_masks_secrets_and_where_to_fix_it() -> None:
    config = ClusterConfig(
        "source", {"bootstrap.servers": "b:9092", "sasl.password": "hunter22"}, origin="--source-config s.json"
    )
    refused = refused_settings(config, KafkaException(_Error("_INVALID_ARG", 'No "hunter22" here.')))
    assert str(refused) == (
        'The source cluster settings are refused by librdkafka: No "***" here. Fix or remove that setting in '
        "--source-config s.json (librdkafka's CONFIGURATION.md lists the valid keys and values)."
    )
    key = refused_settings(config, ValueError("ssl.key.location failed: bad decrypt"))
    assert str(key).startswith(
        "The source cluster settings are refused by librdkafka: ssl.key.location failed: bad decrypt (a wrong or "
        "missing ssl.key.password shows as a key that cannot be read). Fix or remove"
    )
    codec = refused_settings(config, ValueError("unknown codec LZX"))
    assert "refused by librdkafka: unknown codec LZX. Fix" in str(codec)
    assert "refused by librdkafka: TypeError. Fix" in str(refused_settings(config, TypeError()))  # said nothing


def test_a_setting_librdkafka_refuses_is_named_before_any_client_connects(monkeypatch: pytest.MonkeyPatch) -> None:
    import confluent_kafka

    built: list[dict[str, Any]] = []
    real = confluent_kafka.Producer
    monkeypatch.setattr(confluent_kafka, "Producer", lambda settings: built.append(settings) or real(settings))
    config = ClusterConfig("source", {"bootstrap.servers": "b:9092", "socket.timeout.ms": "soon"}, origin="s.json")
    with pytest.raises(ConfigurationError) as refused:
        check_client_settings(config)
    assert str(refused.value).startswith(
        "The source cluster settings are refused by librdkafka: Invalid value for configuration property "
        '"socket.timeout.ms". Fix or remove that setting in s.json'
    )
    assert [("bootstrap.servers" in settings, settings["socket.timeout.ms"]) for settings in built] == [(False, "soon")]


# The bounded waits that come from each cluster's librdkafka settings (the wait for new topics: test_creation.py).


def test_reader_stall_timeout_is_socket_timeout_ms() -> None:
    assert stall_timeout({}) == 60.0  # librdkafka's default socket.timeout.ms
    assert stall_timeout({"socket.timeout.ms": "5000"}) == 5.0


def test_producer_gets_a_bounded_message_timeout_unless_the_user_set_one() -> None:
    assert producer_settings({}, 1000)["message.timeout.ms"] == DEFAULT_MESSAGE_TIMEOUT_MS
    assert producer_settings({"message.timeout.ms": 9000}, 1000)["message.timeout.ms"] == 9000
    assert "message.timeout.ms" not in producer_settings({"delivery.timeout.ms": 9000}, 1000)  # librdkafka alias


def test_delivery_timeout_follows_the_producer_setting_or_its_alias() -> None:
    assert delivery_timeout({}) == DEFAULT_MESSAGE_TIMEOUT_MS / 1000
    assert delivery_timeout({"message.timeout.ms": 8000}) == 8.0
    assert delivery_timeout({"delivery.timeout.ms": "7000"}) == 7.0


def test_cluster_label_names_role_and_address_only() -> None:
    settings = {"bootstrap.servers": "b1:9093", "sasl.password": "hunter2"}
    assert cluster_label("target", settings) == "target cluster b1:9093"
    assert cluster_label("source", {}) == "source cluster"
