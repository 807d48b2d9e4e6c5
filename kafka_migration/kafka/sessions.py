"""One SCRAM user's clients on one cluster, for the live probes of an access sync (``access/probes/rules.py`` plans
them, ``access/probes/live.py`` asks both clusters): each probe is one thing the user tries, answered ``allowed``,
``denied (ERROR)`` or ``inconclusive: why`` (``model/probes.py``).

The probes are built to leave nothing the migration would copy or count:

- produce: one record larger than the topic's ``max.message.bytes``. The broker checks WRITE first, then the
  size: an allowed producer gets MESSAGE_TOO_LARGE and nothing is appended; a denied one
  TOPIC_AUTHORIZATION_FAILED. A topic whose limit cannot be read is not produced to.
- consume: a fetch from the end of partition 0 (assigned, no group membership, nothing committed): READ allowed
  reaches the end of the partition, denied gets TOPIC_AUTHORIZATION_FAILED.
- commit: an offset commit for the group on a partition the topic does not have: the broker checks READ on the
  group and on the topic, then refuses the unknown partition (UNKNOWN_TOPIC_OR_PART: allowed; nothing stored).
- describe: a topic's metadata (an absent topic answers UNKNOWN_TOPIC_OR_PART when DESCRIBE is allowed).
- transaction: ``init_transactions`` with a transactional id of the binding's prefix (``<prefix>km-probe``, never
  an id an application uses: initializing a live id would fence its producer), then an empty transaction begun
  and aborted. The broker keeps the id's producer state in ``__transaction_state`` (not copied by a run; it
  expires after ``transactional.id.expiration.ms``). LITERAL transactional ids are therefore not probed.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

from kafka_migration.kafka.acls import AUTHORIZATION_FAILURES
from kafka_migration.kafka.settings import client_settings
from kafka_migration.model.access import Password, ScramMechanism
from kafka_migration.model.config import ClusterConfig, scrub
from kafka_migration.model.probes import PROBE_SUFFIX, ProbeAnswer, ProbeKind

# An outcome is text: the answer, then what the broker said (model/probes.ProbeAnswer).
ALLOWED, INCONCLUSIVE = ProbeAnswer.ALLOWED.value, ProbeAnswer.INCONCLUSIVE.value
NO_PARTITION = 999_999  # a partition no topic has: a commit to it stores nothing


def _outcome(error: Any) -> str:
    """A broker's answer as an outcome: an authorization failure is a denial; the answers a probe expects of an
    allowed request (see the module) are ``allowed``; anything else is inconclusive."""
    name = error.name() if hasattr(error, "name") else str(error)
    if name in AUTHORIZATION_FAILURES:
        return f"{ProbeAnswer.DENIED} ({name})"
    if name in ("MSG_SIZE_TOO_LARGE", "UNKNOWN_TOPIC_OR_PART", "_PARTITION_EOF"):
        return ALLOWED
    reason = error.str() if hasattr(error, "str") else str(error)
    return f"{INCONCLUSIVE}: {name} ({reason})"


def _close(producer: Any) -> None:
    """Close a probe's producer once its answer is had (or its request failed): a failure to close changes nothing
    of the answer. Its consumers are closed in their own ``finally``."""
    try:
        producer.close()
    except Exception:  # the client's own teardown: the probe's outcome stands
        return


class UserSession:
    """One user's clients on one cluster: the cluster's connection settings with the user's SASL login."""

    def __init__(
        self, config: ClusterConfig, user: str, password: Password, mechanism: ScramMechanism, timeout: float
    ) -> None:
        self.config, self.user, self.timeout = config, user, timeout
        self._secret = password.password
        self._admin: Any = None
        self.settings = {
            **config.settings,
            "sasl.mechanism": str(mechanism),
            "sasl.username": user,
            "sasl.password": password.password,
            "socket.connection.setup.timeout.ms": int(timeout * 1000),
        }

    def _scrub(self, text: str) -> str:
        return scrub(text, self.settings).replace(self._secret, "***")

    def run(self, kind: ProbeKind, resource: str, topic: str | None, max_message_bytes: int | None) -> str:
        from confluent_kafka import KafkaException

        tries = {
            ProbeKind.DESCRIBE: lambda: self.describe(resource),
            ProbeKind.PRODUCE: lambda: self.produce(resource, max_message_bytes),
            ProbeKind.CONSUME: lambda: self.consume(resource),
            ProbeKind.COMMIT: lambda: self.commit(resource, topic or PROBE_SUFFIX),
            ProbeKind.TRANSACTION: lambda: self.transaction(resource),
        }
        try:
            return tries[kind]()
        except KafkaException as exc:
            return self._scrub(_outcome(exc.args[0] if exc.args else exc))
        except Exception as exc:  # a client that could not even start: the probe says nothing of the authorizer
            return self._scrub(f"{INCONCLUSIVE}: {type(exc).__name__} ({exc})")

    def describe(self, topic: str) -> str:
        from confluent_kafka import TopicCollection
        from confluent_kafka.admin import AdminClient

        if self._admin is None:  # one per user and cluster: its login is paid once for every describe
            self._admin = AdminClient(client_settings(self.settings))
        future = self._admin.describe_topics(TopicCollection([topic]), request_timeout=self.timeout)[topic]
        future.result(timeout=self.timeout + 5)
        return ALLOWED

    def produce(self, topic: str, max_message_bytes: int | None) -> str:
        from confluent_kafka import Producer

        if max_message_bytes is None:
            return f"{INCONCLUSIVE}: the topic's max.message.bytes could not be read, so no record was sent"
        size = max_message_bytes + 1
        producer = Producer(
            client_settings(
                {
                    **self.settings,
                    "enable.idempotence": False,
                    "acks": "all",
                    "retries": 0,
                    "compression.type": "none",
                    "linger.ms": 0,
                    "allow.auto.create.topics": False,
                    "message.max.bytes": min(size + 4096, 1_000_000_000),
                    "message.timeout.ms": int(self.timeout * 1000),
                }
            )
        )
        answers: list[Any] = []
        try:
            producer.produce(topic, b"\0" * size, partition=0, on_delivery=lambda e, m: answers.append((e, m)))
            producer.flush(self.timeout + 5)
        finally:
            _close(producer)
        if not answers:
            return f"{INCONCLUSIVE}: no delivery report within {self.timeout:.0f}s"
        error, message = answers[0]
        if error is None:  # the topic took a record over its own limit: say so, loudly
            return f"{INCONCLUSIVE}: a probe record was appended at offset {message.offset()} of partition 0"
        return self._scrub(_outcome(error))

    def _consumer(self, group: str) -> Any:
        from confluent_kafka import Consumer

        return Consumer(
            client_settings(
                {
                    **self.settings,
                    "group.id": group,
                    "enable.auto.commit": False,
                    "enable.auto.offset.store": False,
                    "enable.partition.eof": True,
                    "allow.auto.create.topics": False,
                    "auto.offset.reset": "latest",
                    "fetch.wait.max.ms": 10,
                }
            )
        )

    def consume(self, topic: str) -> str:
        from confluent_kafka import OFFSET_END, TopicPartition

        consumer = self._consumer(PROBE_SUFFIX)
        try:
            # Without DESCRIBE the partition never gets a leader, and an assigned consumer waits silently.
            described = consumer.list_topics(topic, timeout=self.timeout).topics.get(topic)
            refused = described is not None and described.error is not None
            if refused and described.error.name() in AUTHORIZATION_FAILURES:
                return self._scrub(_outcome(described.error))
            consumer.assign([TopicPartition(topic, 0, OFFSET_END)])
            deadline = time.monotonic() + self.timeout
            while time.monotonic() < deadline:
                message = consumer.poll(0.2)
                if message is None:
                    continue
                error = message.error()
                if error is None:
                    return ALLOWED  # a record written meanwhile: read, not committed
                if error.name() == "GROUP_AUTHORIZATION_FAILED":
                    continue  # the consumer's coordinator lookup, not the fetch: the commit probe asks the group
                return self._scrub(_outcome(error))
            return f"{INCONCLUSIVE}: no fetch answered within {self.timeout:.0f}s"
        finally:
            consumer.close()

    def commit(self, group: str, topic: str) -> str:
        from confluent_kafka import TopicPartition

        consumer = self._consumer(group)
        try:
            committed = consumer.commit(offsets=[TopicPartition(topic, NO_PARTITION, 0)], asynchronous=False)
            errors = [p.error for p in committed or () if p.error is not None]
            return self._scrub(_outcome(errors[0])) if errors else f"{INCONCLUSIVE}: the commit was accepted"
        finally:
            consumer.close()

    def transaction(self, transactional_id: str) -> str:
        from confluent_kafka import Producer

        producer = Producer(
            client_settings(
                {
                    **self.settings,
                    "transactional.id": transactional_id,
                    "transaction.timeout.ms": 60_000,
                    "message.timeout.ms": 60_000,
                }
            )
        )
        try:
            producer.init_transactions(self.timeout)
            producer.begin_transaction()
            producer.abort_transaction(self.timeout)
        finally:
            _close(producer)
        return ALLOWED


def max_message_bytes(config: ClusterConfig, topics: Iterable[str], timeout: float) -> dict[str, int]:
    """Each topic's ``max.message.bytes``, read with the sync's own connection (the users may not
    DescribeConfigs); a topic it cannot read is left out, and is then not produced to."""
    from confluent_kafka.admin import AdminClient, ConfigResource, ResourceType

    wanted = sorted(set(topics))
    if not wanted:
        return {}
    admin = AdminClient(client_settings(config.settings))
    resources = [ConfigResource(ResourceType.TOPIC, t) for t in wanted]
    found = {}
    for resource, future in admin.describe_configs(resources, request_timeout=timeout).items():
        try:
            entry = future.result(timeout=timeout + 5).get("max.message.bytes")
        except Exception:
            continue
        if entry is not None and entry.value is not None:
            found[resource.name] = int(entry.value)
    return found
