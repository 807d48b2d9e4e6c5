"""Consumer groups through confluent-kafka: list them, read their state and committed offsets, write offsets,
and read the one record a proof needs.

A subclass of ``clients.KafkaCluster``, so reachability checks and error messages are the same as
for the rest of the pipeline. Group state decides "active" (``state.ConsumerGroup.active``): a
group with members is never EMPTY or DEAD in Kafka, whatever its member list says.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from contextlib import closing
from typing import Any

from kafka_migration.exceptions import MigrationError
from kafka_migration.kafka.acls import Permission
from kafka_migration.kafka.clients import KafkaCluster
from kafka_migration.kafka.reader import records
from kafka_migration.model.checksums import encode_record, message_fields
from kafka_migration.model.config import Endpoint
from kafka_migration.model.state import CommittedOffset, ConsumerGroup
from kafka_migration.model.text import plural


def _state_name(state: Any) -> str:
    return str(getattr(state, "name", state) or "UNKNOWN").upper()


class GroupCluster(KafkaCluster):
    """Consumer group admin calls on one cluster, with errors that name the cluster, the group and the fix."""

    def group_ids(self) -> list[str]:
        """Every consumer group the cluster lists (ListGroups on every broker)."""
        from confluent_kafka import KafkaException

        try:
            result = self.admin.list_consumer_groups(request_timeout=self.timeout).result(timeout=self.timeout + 5)
        except KafkaException as exc:
            raise self._unreachable(exc.args[0] if exc.args else exc) from exc
        except TimeoutError as exc:
            raise self._unreachable(exc) from exc
        if result.errors:
            raise MigrationError(
                f"{self.config.role} cluster {self.config.bootstrap}: listing consumer groups failed on some "
                f"brokers ({result.errors[0]}); check the principal may describe groups, then retry."
            )
        return sorted({g.group_id for g in result.valid})

    def states(self, group_ids: Iterable[str]) -> dict[str, tuple[str, int]]:
        """Group id -> (state name, member count). A group the cluster does not know is DEAD."""
        return {
            group_id: (_state_name(description.state), len(description.members or []))
            for group_id, description in self._describe(group_ids, "to read its state; Read implies it").items()
        }

    def members(self, group_ids: Iterable[str]) -> dict[str, list[str]]:
        """Group id -> its members as the cluster names them ("client id on host"), for a refusal to name the
        consumers that still hold a group (one killed without closing stays until its session timeout)."""
        return {
            group_id: sorted(f"{m.client_id or m.member_id} on {m.host.lstrip('/')}" for m in description.members or [])
            for group_id, description in self._describe(group_ids, "to read its members; Read implies it").items()
        }

    def _describe(self, group_ids: Iterable[str], purpose: str) -> dict[str, Any]:
        """Each group's description (DescribeGroups), retried per group as ``_per_group`` does."""
        ids = sorted(set(group_ids))
        if not ids:
            return {}
        return self._per_group(
            lambda wanted: self.admin.describe_consumer_groups(wanted, request_timeout=self.timeout),
            ids,
            "describe consumer group",
            lambda group_id: Permission("Describe", "group", (group_id,), purpose),
        )

    def _per_group(self, request: Any, ids: list[str], what: str, needs: Any) -> dict[str, Any]:
        """``request(ids)`` ({group id: future}) answered per group. A group whose coordinator is loading or
        moving (the offsets topic made by a cluster's first group request, a broker restarting) answers with
        an error Kafka calls retriable: those groups are asked again until the client's timeout."""
        from confluent_kafka import KafkaException

        deadline = time.monotonic() + self.timeout
        answers: dict[str, Any] = {}
        pending = list(ids)
        while pending:
            retry = []
            for group_id, future in request(pending).items():
                try:
                    answers[group_id] = self._result(future, f"{what} {group_id!r}", needs(group_id))
                except MigrationError as exc:
                    cause = exc.__context__
                    moving = isinstance(cause, KafkaException) and cause.args and _coordinator_moving(cause.args[0])
                    if not moving or time.monotonic() >= deadline:
                        raise
                    retry.append(group_id)
            if retry:
                time.sleep(0.5)
            pending = retry
        return answers

    def committed(self, group_id: str) -> dict[tuple[str, int], CommittedOffset]:
        """Every committed offset of a group, with its metadata string."""
        from confluent_kafka import ConsumerGroupTopicPartitions

        result = self._per_group(
            lambda wanted: self.admin.list_consumer_group_offsets(
                [ConsumerGroupTopicPartitions(g) for g in wanted], request_timeout=self.timeout
            ),
            [group_id],
            "read the committed offsets of group",
            lambda g: Permission("Describe", "group", (g,), "to read its committed offsets; Read implies it"),
        )[group_id]
        out = {}
        for tp in result.topic_partitions or []:
            if tp.error is not None:
                raise MigrationError(
                    f"{self.config.role} cluster {self.config.bootstrap}: committed offset of group {group_id!r} on "
                    f"{tp.topic}[{tp.partition}] could not be read: {tp.error}"
                )
            if tp.offset >= 0:
                out[(tp.topic, tp.partition)] = CommittedOffset(int(tp.offset), tp.metadata or None)
        return out

    def groups(self, group_ids: Iterable[str], known: Iterable[str] | None = None) -> dict[str, ConsumerGroup]:
        """State and committed offsets of each group; ``known`` (the listed groups) marks which exist at all."""
        ids = sorted(set(group_ids))
        listed = set(known) if known is not None else set(ids)
        states = self.states(ids)
        out = {}
        for group_id in ids:
            state, members = states.get(group_id, ("DEAD", 0))
            exists = group_id in listed or state != "DEAD"
            out[group_id] = ConsumerGroup(
                group_id=group_id,
                state=state,
                members=members,
                offsets=self.committed(group_id) if exists else {},
                exists=exists,
            )
        return out

    def end_offsets(self, partitions: Iterable[tuple[str, int]]) -> dict[tuple[str, int], int]:
        """Log end (read-committed) of each (topic, partition) that exists; others are left out."""
        from confluent_kafka import IsolationLevel, KafkaException, TopicPartition
        from confluent_kafka.admin import OffsetSpec

        wanted = sorted(set(partitions))
        if not wanted:
            return {}
        futures = self.admin.list_offsets(
            {TopicPartition(t, p): OffsetSpec.latest() for t, p in wanted},
            isolation_level=IsolationLevel.READ_COMMITTED,
            request_timeout=self.timeout,
        )
        out = {}
        for tp, future in futures.items():
            try:
                out[(tp.topic, tp.partition)] = int(future.result(timeout=self.timeout + 5).offset)
            except (KafkaException, TimeoutError):
                continue  # a deleted topic or partition: no lag to show
        return out

    def alter_offsets(self, group_id: str, offsets: Mapping[tuple[str, int], CommittedOffset]) -> None:
        """AlterConsumerGroupOffsets for one group. Kafka refuses it while the group has members."""
        from confluent_kafka import ConsumerGroupTopicPartitions, KafkaException, TopicPartition

        if not offsets:
            return
        partitions = [
            # librdkafka takes a metadata string or none at all: TopicPartition refuses metadata=None
            TopicPartition(topic, partition, committed.offset, metadata=committed.metadata)
            if committed.metadata
            else TopicPartition(topic, partition, committed.offset)
            for (topic, partition), committed in sorted(offsets.items())
        ]
        deadline = time.monotonic() + self.timeout
        while True:
            futures = self.admin.alter_consumer_group_offsets(
                [ConsumerGroupTopicPartitions(group_id, partitions)], request_timeout=self.timeout
            )
            try:
                result = futures[group_id].result(timeout=self.timeout + 5)
            except KafkaException as exc:
                if _coordinator_moving(exc.args[0] if exc.args else None) and time.monotonic() < deadline:
                    time.sleep(0.5)
                    continue
                raise MigrationError(
                    f"{self.config.role} cluster {self.config.bootstrap} refused the offsets of group {group_id!r}: "
                    f"{exc.args[0].str() if exc.args else exc}. A group with active members cannot be changed; "
                    "stop its consumers and sync again."
                ) from exc
            except TimeoutError as exc:
                raise self._unreachable(TimeoutError(f"no answer to altering group {group_id!r}")) from exc
            failed = [tp for tp in result.topic_partitions or [] if tp.error is not None]
            # The group's coordinator is still loading or moving (the offsets topic created by the cluster's
            # first group request, a broker restarting): Kafka calls these errors retriable; ask again.
            if failed and all(_coordinator_moving(tp.error) for tp in failed) and time.monotonic() < deadline:
                time.sleep(0.5)
                continue
            break
        if failed:
            first = failed[0]
            raise MigrationError(
                f"{self.config.role} cluster {self.config.bootstrap} refused offset {first.offset} of group "
                f"{group_id!r} on {first.topic}[{first.partition}]: {first.error} ({plural(len(failed), 'partition')} "
                "failed)."
            )


def first_record(cluster: Endpoint, topic: str, partition: int, start: int, end: int) -> tuple[int, bytes] | None:
    """Offset and canonical encoding of the first record in ``[start, end)`` of ``cluster``, None when the range
    holds none.

    The same reader and encoding as verification, so "the same record" means what it means there.
    """
    if end <= start:
        return None
    with closing(records(cluster, topic, partition, start, end)) as found:  # closes the consumer
        for msg in found:
            return msg.offset(), encode_record(*message_fields(msg))
    return None


def _coordinator_moving(error: Any) -> bool:
    """A group coordinator that is loading, not yet elected or has moved: retriable in Kafka's protocol."""
    from confluent_kafka import KafkaError

    code = error.code() if hasattr(error, "code") else None
    return code in (
        KafkaError.NOT_COORDINATOR,
        KafkaError.COORDINATOR_NOT_AVAILABLE,
        KafkaError.COORDINATOR_LOAD_IN_PROGRESS,
    )
