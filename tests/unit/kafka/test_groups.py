"""kafka/groups.py without a broker: the committed offsets a group sync writes, each with its metadata string when
it has one (librdkafka's TopicPartition refuses metadata=None). The sync against real brokers is in
tests/integration/test_group_sync.py."""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Future
from typing import Any

from confluent_kafka import ConsumerGroupTopicPartitions

from kafka_migration.kafka.groups import GroupCluster
from kafka_migration.model.config import ClusterConfig
from kafka_migration.model.state import CommittedOffset


class _Admin:
    """The admin client's AlterConsumerGroupOffsets: keeps each request, answers every partition written."""

    def __init__(self) -> None:
        self.requests: list[list[ConsumerGroupTopicPartitions]] = []

    def alter_consumer_group_offsets(
        self, requests: Sequence[ConsumerGroupTopicPartitions], request_timeout: float
    ) -> dict[str, Future[Any]]:
        self.requests.append(list(requests))
        answers: dict[str, Future[Any]] = {}
        for request in requests:
            answers[request.group_id] = Future()
            answers[request.group_id].set_result(request)
        return answers


def test_offsets_are_written_with_their_metadata_and_without_one_when_they_have_none() -> None:
    admin = _Admin()
    cluster = GroupCluster(ClusterConfig("target", {"bootstrap.servers": "tgt:9092"}))
    cluster._admin = admin  # the cached admin client, replaced

    cluster.alter_offsets(
        "app",
        {("orders", 1): CommittedOffset(7, None), ("orders", 0): CommittedOffset(5, "checkpoint-3")},
    )

    ((request,),) = admin.requests
    assert request.group_id == "app"
    written = [(tp.topic, tp.partition, tp.offset, tp.metadata) for tp in request.topic_partitions]
    assert written == [("orders", 0, 5, "checkpoint-3"), ("orders", 1, 7, None)]
