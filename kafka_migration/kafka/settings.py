"""librdkafka settings as the product uses them: consumers, producers and admin clients, their timeouts,
the quiet logger every client gets, and the check that refuses bad settings before anything is written.

Pure settings logic: no cluster is contacted.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from kafka_migration.exceptions import ConfigurationError
from kafka_migration.model.config import ClusterConfig, scrub
from kafka_migration.model.text import noun_for

_rdkafka_log = logging.getLogger("kafka_migration.librdkafka")


class _QuietRdkafkaLogger:
    """Route librdkafka's own log lines (connection retries...) to DEBUG.

    The pipeline reports failures itself, with context; librdkafka's retry chatter
    on stderr only buries that message.
    """

    def log(self, level: int, msg: str, *args: Any) -> None:
        _rdkafka_log.debug(msg, *args)


class _ConnectionWatch(_QuietRdkafkaLogger):
    """librdkafka's connection failures for one admin client, kept to explain a failed first call.

    A failed TLS handshake or SASL login reaches the application only through the error callback
    and the log; the admin call itself just times out. Served by ``AdminClient.poll``.
    """

    # KafkaError codes that no retry can fix: wrong certificates, wrong credentials.
    FATAL = ("_SSL", "_AUTHENTICATION")

    def __init__(self) -> None:
        self.fatal: str | None = None
        self.all_down = False
        self.last_failure: str | None = None

    def log(self, level: int, msg: str, *args: Any) -> None:
        super().log(level, msg, *args)
        if args and args[0] == "FAIL":
            self.last_failure = str(args[-1])

    def on_error(self, error: Any) -> None:
        if error.name() in self.FATAL:
            self.fatal = self.fatal or error.str()
        elif error.name() == "_ALL_BROKERS_DOWN":
            self.all_down = True
        else:
            self.last_failure = error.str()


# Bounded waits when a cluster stops answering (docs/concepts.md). Each comes from the
# cluster's librdkafka settings, so users tune them where they tune everything else.
DEFAULT_SOCKET_TIMEOUT_MS = 60_000  # librdkafka's socket.timeout.ms default
DEFAULT_MESSAGE_TIMEOUT_MS = 120_000  # librdkafka's own default is 300,000: a dead target would hold a task 5 min


def stall_timeout(settings: Mapping[str, Any]) -> float:
    """Seconds a reader may go without any answer from its cluster before it gives up: socket.timeout.ms.

    A consumer whose brokers are gone reports nothing at all (it reconnects forever), so the
    reader itself must notice that nothing arrives; a cluster back within this time is used again.
    """
    return int(settings.get("socket.timeout.ms", DEFAULT_SOCKET_TIMEOUT_MS)) / 1000.0


def delivery_timeout(settings: Mapping[str, Any]) -> float:
    """Seconds after which a record the target has not acknowledged fails: message.timeout.ms."""
    value = settings.get("message.timeout.ms", settings.get("delivery.timeout.ms", DEFAULT_MESSAGE_TIMEOUT_MS))
    return int(value) / 1000.0


def cluster_label(role: str, settings: Mapping[str, Any]) -> str:
    """``source cluster host:port`` for messages: which cluster, by role and address (never a secret)."""
    bootstrap = settings.get("bootstrap.servers")
    return f"{role} cluster {bootstrap}" if bootstrap else f"{role} cluster"


def client_settings(settings: Mapping[str, Any]) -> dict[str, Any]:
    return {**settings, "logger": _QuietRdkafkaLogger()}


# The group.id of the copy's and verification's consumers (librdkafka requires one): they assign partitions
# themselves and commit nothing, but each looks up the group's coordinator when it starts.
READER_GROUP = "kafka-migration"


def consumer_settings(settings: Mapping[str, Any]) -> dict[str, Any]:
    """Reader settings: bounded prefetch memory, no group membership, fail on missing offsets."""
    defaults = {
        "queued.max.messages.kbytes": 16384,
        # The end of a partition is only seen after an empty fetch, which the broker holds this
        # long: the reader never waits for new records, so keep it short.
        "fetch.wait.max.ms": 10,
        # Once the prefetch queue is over its bound, librdkafka postpones a partition's next fetch by this long
        # (its default, 1000 ms, leaves a reader that drains its queue in a few ms idle for the rest of the second):
        # one consumer read 1,000,000 records of 200 B from 8 partitions in 27.6 s with the default, 1.3 s with 10 ms.
        "fetch.queue.backoff.ms": 10,
        "fetch.max.bytes": 16 * 1024 * 1024,
        "receive.message.max.bytes": 32 * 1024 * 1024,
        "socket.connection.setup.timeout.ms": 15000,
    }
    required = {
        "group.id": READER_GROUP,
        "enable.auto.commit": False,
        "enable.auto.offset.store": False,
        "enable.partition.eof": True,
        "isolation.level": "read_committed",
        "auto.offset.reset": "error",
    }
    return client_settings({**defaults, **settings, **required})


# The promises under "nothing doubled" (docs/concepts.md, Retries without duplicates), kept by the copy's producer
# whatever the user sets: it is idempotent (a write retried after a lost acknowledgement is dropped by the broker,
# not appended again), writes with acks=all (a record is confirmed once every in-sync replica holds it; librdkafka's
# idempotence requires it) and keeps at most 5 requests in flight per connection (the broker remembers the last 5
# batches of a producer: beyond that it cannot tell a retry from a new write). A user setting that would break one
# is refused before anything is written, never silently replaced: the user would believe it in force.
@dataclass(frozen=True)
class ProducerPromise:
    """One promise: its setting, librdkafka's other name for it, what the copy sets, which values keep it."""

    setting: str
    aliases: tuple[str, ...]
    value: bool | str | int
    kept: Callable[[Any], bool]
    allowed: str  # the values that keep it, for messages
    why: str
    keep_given: bool = False  # a user's value that keeps the promise is used (a lower bound on requests in flight)

    @property
    def keys(self) -> tuple[str, ...]:
        return (self.setting, *self.aliases)


def _whole(value: Any) -> int | None:
    """``value`` as a whole number (5, "5", "5.0", as librdkafka reads an integer setting), else None."""
    if isinstance(value, bool):
        return None
    try:
        number = float(str(value).strip())
    except ValueError:
        return None
    return int(number) if number.is_integer() else None


MAX_IN_FLIGHT = 5  # the most requests in flight per connection an idempotent producer may have (Kafka's limit)

PRODUCER_PROMISES = (
    ProducerPromise(
        "enable.idempotence",
        (),
        True,
        lambda value: str(value).lower() in ("true", "t", "1"),  # librdkafka's spellings of true
        "true",
        "without idempotence a write retried after a lost acknowledgement is appended twice",
    ),
    ProducerPromise(
        "acks",
        ("request.required.acks",),
        "all",
        lambda value: str(value).lower() == "all" or _whole(value) == -1,
        "all or -1",
        "a record counts as written once every in-sync replica holds it, and idempotence requires acks=all",
    ),
    ProducerPromise(
        "max.in.flight.requests.per.connection",
        ("max.in.flight",),
        MAX_IN_FLIGHT,
        lambda value: 1 <= (_whole(value) or 0) <= MAX_IN_FLIGHT,
        f"1 to {MAX_IN_FLIGHT}",
        f"with more than {MAX_IN_FLIGHT} requests in flight the broker cannot tell a retry from a new write",
        keep_given=True,
    ),
)


def broken_promises(settings: Mapping[str, Any], *, required: bool = False) -> list[str]:
    """``key=value (allowed, why)`` for each setting in ``settings`` that breaks a promise of the copy's producer;
    with ``required`` (the settings a producer is built with), a promise whose setting is absent is broken too."""
    broken = []
    for promise in PRODUCER_PROMISES:
        given = [key for key in promise.keys if key in settings]
        broken += [
            f"{key}={settings[key]!r} (allowed: {promise.allowed}; {promise.why})"
            for key in given
            if not promise.kept(settings[key])
        ]
        if required and not given:
            broken.append(f"{promise.setting} unset (allowed: {promise.allowed}; {promise.why})")
    return broken


def check_producer_promises(
    settings: Mapping[str, Any], role: str = "target", where: str | None = None, *, required: bool = False
) -> None:
    """Refuse settings under which the copy's producer could double, lose or reorder records: one
    ConfigurationError naming each such setting and the way out (PRODUCER_PROMISES)."""
    broken = broken_promises(settings, required=required)
    if broken:
        promised = ", ".join(f"{p.setting}={str(p.value).lower()}" for p in PRODUCER_PROMISES)
        raise ConfigurationError(
            f"The {role} cluster {noun_for(len(broken), 'setting')} {'; '.join(broken)} would break what the copy "
            f"promises (nothing lost, nothing doubled). Remove {'it' if len(broken) == 1 else 'them'} from "
            f"{where or f'the {role} cluster settings'}: kafka-migrate's producer sets {promised} itself."
        )


def producer_settings(
    settings: Mapping[str, Any], max_message_bytes: int, role: str = "target", where: str | None = None
) -> dict[str, Any]:
    """Writer settings: idempotent, acks=all, at most 5 requests in flight, so that retries neither lose nor reorder
    nor double. A setting of ``settings`` that breaks one of these is refused (``check_producer_promises``)."""
    check_producer_promises(settings, role, where)
    defaults = {
        "linger.ms": 20,
        "batch.size": 1024 * 1024,
        "compression.type": "lz4",
        "queue.buffering.max.kbytes": 32768,
        "queue.buffering.max.messages": 100000,
        "socket.connection.setup.timeout.ms": 15000,
    }
    merged = {**defaults, **settings}
    try:
        wanted = int(merged.get("message.max.bytes", 0))
    except (TypeError, ValueError):
        raise ValueError(
            f'Invalid value "{merged["message.max.bytes"]}" for configuration property "message.max.bytes"'
        ) from None
    merged["message.max.bytes"] = max(wanted, max_message_bytes + 1024)
    if "message.timeout.ms" not in merged and "delivery.timeout.ms" not in merged:
        merged["message.timeout.ms"] = DEFAULT_MESSAGE_TIMEOUT_MS
    for promise in PRODUCER_PROMISES:  # each under its own name, once (librdkafka applies the last of two names)
        given = [merged.pop(key) for key in list(merged) if key in promise.keys]
        merged[promise.setting] = _whole(given[-1]) if given and promise.keep_given else promise.value
    check_producer_promises(merged, role, where, required=True)
    return client_settings(merged)


def refused_settings(config: ClusterConfig, exc: BaseException) -> ConfigurationError:
    """librdkafka's reason for refusing a client's settings, secrets masked, and where to fix them."""
    error = exc.args[0] if exc.args else exc
    reason = scrub(error.str() if hasattr(error, "str") else str(error), config.settings) or type(error).__name__
    hint = " (a wrong or missing ssl.key.password shows as a key that cannot be read)" if "ssl.key" in reason else ""
    return ConfigurationError(
        f"The {config.role} cluster settings are refused by librdkafka: {reason.rstrip('.')}{hint}. Fix or remove "
        f"that setting in {config.where} (librdkafka's CONFIGURATION.md lists the valid keys and values)."
    )


def check_client_settings(config: ClusterConfig) -> None:
    """Create, and drop, a producer and a consumer with these settings before anything is written.

    librdkafka refuses unknown keys and bad values only when a client is created; that must not
    happen for the first time in a Spark task halfway through a run. No client connects:
    ``bootstrap.servers`` is left out of the check.
    """
    from confluent_kafka import Consumer, KafkaException, Producer

    settings = {k: v for k, v in config.settings.items() if k != "bootstrap.servers"}
    try:
        Producer(producer_settings(settings, 1, config.role, config.where)).flush(0)
        Consumer(consumer_settings(settings)).close()
    except (KafkaException, ValueError, TypeError) as exc:
        raise refused_settings(config, exc) from None
