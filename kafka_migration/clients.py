"""Thin wrappers over confluent-kafka: client settings, admin calls, clear errors.

Everything that talks to a broker goes through here, so the logic modules can be
tested on plain data and the settings that correctness depends on live in one place.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Mapping
from typing import Any

from kafka_migration.config import ClusterConfig
from kafka_migration.exceptions import ClusterUnreachableError, MigrationError
from kafka_migration.plan import ClusterInfo
from kafka_migration.state import ConfigValue, TopicState

log = logging.getLogger(__name__)
_rdkafka_log = logging.getLogger("kafka_migration.librdkafka")

# ConfigSource.DYNAMIC_TOPIC_CONFIG: the entry was set on the topic itself.
_DYNAMIC_TOPIC_CONFIG = 1


class _QuietRdkafkaLogger:
    """Route librdkafka's own log lines (connection retries...) to DEBUG.

    The pipeline reports failures itself, with context; librdkafka's retry chatter
    on stderr only buries that message.
    """

    def log(self, level: int, msg: str, *args: Any) -> None:
        _rdkafka_log.debug(msg, *args)


def client_settings(settings: Mapping[str, Any]) -> dict[str, Any]:
    return {**settings, "logger": _QuietRdkafkaLogger()}


def consumer_settings(settings: Mapping[str, Any]) -> dict[str, Any]:
    """Reader settings: bounded prefetch memory, no group membership, fail on missing offsets."""
    defaults = {
        "queued.max.messages.kbytes": 16384,
        # The end of a partition is only seen after an empty fetch, which the broker holds this
        # long: the reader never waits for new records, so keep it short.
        "fetch.wait.max.ms": 10,
        "fetch.max.bytes": 16 * 1024 * 1024,
        "receive.message.max.bytes": 32 * 1024 * 1024,
        "socket.connection.setup.timeout.ms": 15000,
    }
    required = {
        "group.id": "kafka-migration",
        "enable.auto.commit": False,
        "enable.auto.offset.store": False,
        "enable.partition.eof": True,
        "isolation.level": "read_committed",
        "auto.offset.reset": "error",
    }
    return client_settings({**defaults, **settings, **required})


def producer_settings(settings: Mapping[str, Any], max_message_bytes: int) -> dict[str, Any]:
    """Writer settings: idempotent and acks=all so retries neither lose nor reorder nor double."""
    defaults = {
        "linger.ms": 20,
        "batch.size": 1024 * 1024,
        "compression.type": "lz4",
        "queue.buffering.max.kbytes": 32768,
        "queue.buffering.max.messages": 100000,
        "socket.connection.setup.timeout.ms": 15000,
    }
    merged = {**defaults, **settings}
    merged["message.max.bytes"] = max(int(merged.get("message.max.bytes", 0)), max_message_bytes + 1024)
    merged.update({"enable.idempotence": True, "acks": "all", "max.in.flight.requests.per.connection": 5})
    return client_settings(merged)


class KafkaCluster:
    """Admin operations on one cluster, with errors that name the cluster and the fix."""

    def __init__(self, config: ClusterConfig, timeout: float = 15.0) -> None:
        self.config = config
        self.timeout = timeout
        self._admin: Any = None

    @property
    def admin(self) -> Any:
        if self._admin is None:
            from confluent_kafka.admin import AdminClient

            self._admin = AdminClient(
                client_settings(
                    {"socket.connection.setup.timeout.ms": int(self.timeout * 1000), **self.config.settings}
                )
            )
        return self._admin

    def _unreachable(self, exc: BaseException) -> ClusterUnreachableError:
        return ClusterUnreachableError(
            f"Cannot reach the {self.config.role} cluster at {self.config.bootstrap} within "
            f"{self.timeout:.0f}s ({exc}). Check the bootstrap address, that the brokers are up and "
            f"reachable from here, and the security settings of the {self.config.role} connection."
        )

    def describe(self) -> ClusterInfo:
        """Cluster id and broker count; the first call, so it doubles as the reachability check."""
        from confluent_kafka import KafkaException

        try:
            result = self.admin.describe_cluster(request_timeout=self.timeout).result(timeout=self.timeout + 5)
        except KafkaException as exc:
            raise self._unreachable(exc.args[0] if exc.args else exc) from None
        except TimeoutError as exc:
            raise self._unreachable(exc) from None
        return ClusterInfo(
            role=self.config.role,
            bootstrap=self.config.bootstrap,
            cluster_id=str(result.cluster_id),
            broker_count=len(result.nodes),
        )

    def topic_names(self) -> list[str]:
        from confluent_kafka import KafkaException

        try:
            metadata = self.admin.list_topics(timeout=self.timeout)
        except KafkaException as exc:
            raise self._unreachable(exc.args[0] if exc.args else exc) from None
        return sorted(metadata.topics)

    def topic_states(self, names: Iterable[str]) -> dict[str, TopicState]:
        """Partitions, replication factor, configs and offsets of the topics that exist."""
        from confluent_kafka import IsolationLevel, KafkaException, TopicPartition
        from confluent_kafka.admin import ConfigResource, OffsetSpec, ResourceType

        wanted = list(names)
        if not wanted:
            return {}
        try:
            metadata = self.admin.list_topics(timeout=self.timeout)
        except KafkaException as exc:
            raise self._unreachable(exc.args[0] if exc.args else exc) from None
        present = [n for n in wanted if n in metadata.topics and metadata.topics[n].error is None]
        if not present:
            return {}

        config_futures = self.admin.describe_configs(
            [ConfigResource(ResourceType.TOPIC, n) for n in present], request_timeout=self.timeout
        )
        configs: dict[str, dict[str, ConfigValue]] = {}
        for resource, future in config_futures.items():
            entries = self._result(future, f"describe configs of topic {resource.name!r}")
            configs[resource.name] = {
                name: ConfigValue(
                    value=entry.value,
                    set_on_topic=int(getattr(entry.source, "value", entry.source)) == _DYNAMIC_TOPIC_CONFIG,
                    read_only=bool(entry.is_read_only),
                    sensitive=bool(entry.is_sensitive),
                )
                for name, entry in entries.items()
            }

        partitions = [TopicPartition(n, p) for n in present for p in metadata.topics[n].partitions]
        found: dict[tuple[str, str], dict[int, int]] = {}
        for kind, spec in (("earliest", OffsetSpec.earliest()), ("latest", OffsetSpec.latest())):
            futures = self.admin.list_offsets(
                {tp: spec for tp in partitions},
                isolation_level=IsolationLevel.READ_COMMITTED,
                request_timeout=self.timeout,
            )
            for tp, future in futures.items():
                info = self._result(future, f"list {kind} offset of {tp.topic}[{tp.partition}]")
                found.setdefault((kind, tp.topic), {})[tp.partition] = int(info.offset)

        ids = self.topic_ids(present)
        states = {}
        for name in present:
            topic_md = metadata.topics[name]
            states[name] = TopicState(
                name=name,
                partitions=len(topic_md.partitions),
                replication_factor=max((len(p.replicas) for p in topic_md.partitions.values()), default=0),
                configs=configs.get(name, {}),
                earliest=found.get(("earliest", name), {}),
                latest=found.get(("latest", name), {}),
                topic_id=ids.get(name),
            )
        return states

    def topic_ids(self, names: Iterable[str]) -> dict[str, str]:
        """Topic ids (Kafka 2.8+); a broker that has none, or answers with the null id, leaves a topic out."""
        from confluent_kafka import KafkaException, TopicCollection

        wanted = list(names)
        if not wanted:
            return {}
        ids: dict[str, str] = {}
        try:
            futures = self.admin.describe_topics(TopicCollection(wanted), request_timeout=self.timeout)
        except (KafkaException, NotImplementedError, TypeError):
            return {}
        for name, future in futures.items():
            try:
                description = future.result(timeout=self.timeout + 5)
            except (KafkaException, TimeoutError):
                continue  # deleted meanwhile, or describe_topics not supported: no id
            topic_id = str(getattr(description, "topic_id", "") or "")
            if topic_id and topic_id.strip("A=") and topic_id != "0" * 32:
                ids[name] = topic_id
        return ids

    def offsets_for_time(self, topic: str, partitions: int, timestamp_ms: int) -> dict[int, int]:
        """First offset per partition whose timestamp is at or after ``timestamp_ms`` (-1: none yet)."""
        from confluent_kafka import IsolationLevel, TopicPartition
        from confluent_kafka.admin import OffsetSpec

        futures = self.admin.list_offsets(
            {TopicPartition(topic, p): OffsetSpec.for_timestamp(timestamp_ms) for p in range(partitions)},
            isolation_level=IsolationLevel.READ_COMMITTED,
            request_timeout=self.timeout,
        )
        return {
            tp.partition: int(self._result(f, f"find offsets of {topic}[{tp.partition}] at {timestamp_ms}").offset)
            for tp, f in futures.items()
        }

    def _result(self, future: Any, what: str) -> Any:
        from confluent_kafka import KafkaException

        try:
            return future.result(timeout=self.timeout + 5)
        except KafkaException as exc:
            raise MigrationError(
                f"{self.config.role} cluster {self.config.bootstrap}: could not {what}: {exc}"
            ) from None
        except TimeoutError:
            raise self._unreachable(TimeoutError(f"no answer to: {what}")) from None

    def create_topic(self, name: str, partitions: int, replication_factor: int, configs: Mapping[str, str]) -> bool:
        """Create a topic; False (and a warning) when it already exists."""
        from confluent_kafka import KafkaError, KafkaException
        from confluent_kafka.admin import NewTopic

        futures = self.admin.create_topics(
            [NewTopic(name, partitions, replication_factor, config=dict(configs))],
            request_timeout=self.timeout,
            operation_timeout=self.timeout,
        )
        try:
            futures[name].result(timeout=self.timeout + 5)
        except KafkaException as exc:
            error = exc.args[0]
            if error.code() == KafkaError.TOPIC_ALREADY_EXISTS:
                log.warning("Target topic %s already exists; keeping it", name)
                return False
            raise MigrationError(
                f"Could not create topic {name!r} on the {self.config.role} cluster {self.config.bootstrap}: "
                f"{error.str()}. Check the principal may create topics and that the replication factor "
                f"({replication_factor}) does not exceed the number of brokers."
            ) from None
        return True

    def wait_for_topics(self, names: Iterable[str], timeout: float = 30.0) -> None:
        """Topic creation is asynchronous in Kafka: wait until every partition has a leader."""
        pending = set(names)
        deadline = time.monotonic() + timeout
        while pending:
            metadata = self.admin.list_topics(timeout=self.timeout)
            for name in list(pending):
                topic = metadata.topics.get(name)
                if (
                    topic is not None
                    and topic.error is None
                    and topic.partitions
                    and all(p.leader >= 0 for p in topic.partitions.values())
                ):
                    pending.discard(name)
            if pending and time.monotonic() > deadline:
                raise MigrationError(
                    f"Topics {sorted(pending)} were created on the {self.config.role} cluster but have no "
                    f"leader after {timeout:.0f}s; check the target cluster's health."
                )
            if pending:
                time.sleep(0.2)
