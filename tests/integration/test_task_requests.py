"""A task's clients ask the clusters for the metadata of their own topics only, never of every topic.

librdkafka logs each Metadata request it sends (``debug=metadata``, served to the product's logger
``kafka_migration.librdkafka``): "Request metadata for N topic(s)" or "Request metadata for all topics".
A task whose client listed every topic (an admin ``list_topics()``, a consumer's or producer's
``list_topics()`` without a topic, a regex subscription) would make each of 10,000 tasks fetch the
whole cluster's topic list: a run quadratic in topics. Counting those requests in the real clients
of copy and verify tasks on Apache Kafka is what fails then.
"""

from __future__ import annotations

import logging
import re
from typing import Any

import pytest
from confluent_kafka import Consumer

from harness.data.seed import create_topic, producer, send
from kafka_migration.kafka.clients import KafkaCluster
from kafka_migration.kafka.settings import consumer_settings
from kafka_migration.model.config import ClusterConfig, ClusterPair, MigrationOptions
from kafka_migration.run.copy import copy_partitions_safely
from kafka_migration.run.planner import build_plan
from kafka_migration.run.topics import create_target_topics
from kafka_migration.run.verify import verify_partitions_safely

pytestmark = pytest.mark.integration

ALL_TOPICS = "Request metadata for all topics"
SOME_TOPICS = re.compile(r"Request metadata for (\d+) topic\(s\)")
TOPICS = 12  # on the source besides the task's: what a listing of every topic would ask for
TASK_TOPICS = 3


def _debug(bootstrap: str) -> dict[str, Any]:
    return {"bootstrap.servers": bootstrap, "debug": "metadata"}


def _metadata_requests(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == "kafka_migration.librdkafka" and "Request metadata for" in r.getMessage()
    ]


def test_copy_and_verify_tasks_never_ask_for_every_topic(clusters, unique, caplog) -> None:  # type: ignore[no-untyped-def]
    names = [f"lean{unique}-{i:02d}" for i in range(TOPICS)]
    p = producer(clusters.source)
    for name in names:
        create_topic(clusters.source, name, 1)
        for i in range(5):
            send(p, name, 0, f"k{i}".encode(), b"v")
    p.flush(30)
    source = KafkaCluster(ClusterConfig("source", {"bootstrap.servers": clusters.source}))
    target = KafkaCluster(ClusterConfig("target", {"bootstrap.servers": clusters.target}))
    plan = build_plan(source, target, MigrationOptions(include=f"lean{unique}-.*"))
    create_target_topics(plan, target)
    task = [piece for topic in plan.topics[:TASK_TOPICS] for piece in topic.slices(include_empty=True)]
    big = plan.topics[TASK_TOPICS].slices(include_empty=True)  # alone in its task: the per-slice path

    caplog.set_level(logging.DEBUG, logger="kafka_migration.librdkafka")
    pair = ClusterPair.of_settings(_debug(clusters.source), _debug(clusters.target))
    for pieces in (task, big):
        copied = copy_partitions_safely(pieces, pair)
        assert [c.error for c in copied] == [None] * len(pieces)
        verified = verify_partitions_safely(pieces, pair)
        assert all(v.match for v in verified), verified

    requests = _metadata_requests(caplog)
    assert requests, "no Metadata request logged: the capture of librdkafka's debug log does not work"
    assert not [line for line in requests if ALL_TOPICS in line], requests
    asked = [int(found.group(1)) for line in requests if (found := SOME_TOPICS.search(line))]
    assert asked and max(asked) <= TASK_TOPICS, requests  # a task's own topics, never more

    # The check can fail: a client listing every topic is seen as such.
    caplog.clear()
    consumer = Consumer(consumer_settings(_debug(clusters.source)))
    try:
        consumer.list_topics(timeout=15)
        consumer.consume(num_messages=1, timeout=0.5)  # serves the client's log
    finally:
        consumer.close()
    assert any(ALL_TOPICS in line for line in _metadata_requests(caplog))
