"""copy_partition and verify_partition on two Apache Kafka clusters, without Spark.

The target is always checked a second time with ``harness.data.read.read_partition``, an
independent reader: key, value, headers and timestamp of every record, in order,
must equal the source's planned range. Offsets may differ (the source has gaps from
transaction markers; the copy writes contiguous offsets).
"""

from __future__ import annotations

import itertools
from dataclasses import replace
from typing import Any

import pytest
from confluent_kafka.admin import AdminClient, ConfigResource, ResourceType

from harness.data.read import read_partition, without_offsets
from harness.data.seed import KEEP_FOREVER, OLD_TIMESTAMP, create_topic, producer, send
from kafka_migration.exceptions import ForeignRecordsError
from kafka_migration.kafka.clients import KafkaCluster
from kafka_migration.kafka.settings import client_settings
from kafka_migration.model.config import ClusterConfig, ClusterPair, MigrationOptions
from kafka_migration.model.plan import MigrationPlan, PartitionSlice
from kafka_migration.run.copy import copy_partition
from kafka_migration.run.planner import build_plan
from kafka_migration.run.topics import create_target_topics
from kafka_migration.run.verify import verify_partition

pytestmark = pytest.mark.integration

LARGE = 2_097_152  # max.message.bytes of the large-record topic, on the source and (copied) on the target


def _pair(clusters: Any) -> ClusterPair:
    return ClusterPair.of_settings(_settings(clusters.source), _settings(clusters.target))


def _settings(bootstrap: str) -> dict[str, Any]:
    return {"bootstrap.servers": bootstrap}


def _plan_and_create(clusters: Any, include: str) -> MigrationPlan:
    """Plan like the pipeline does (end offsets fixed now) and create the target topics."""
    source = KafkaCluster(ClusterConfig("source", _settings(clusters.source)))
    target = KafkaCluster(ClusterConfig("target", _settings(clusters.target)))
    plan = build_plan(source, target, MigrationOptions(include=include))
    create_target_topics(plan, target)
    return plan


def _planned_source(bootstrap: str, task: PartitionSlice) -> list[dict[str, Any]]:
    return [
        r for r in read_partition(bootstrap, task.source_topic, task.partition) if task.start <= r["offset"] < task.end
    ]


def _has_gaps(records: list[dict[str, Any]]) -> bool:
    return any(b["offset"] - a["offset"] > 1 for a, b in itertools.pairwise(records))


def _seed_rich(bootstrap: str, topic: str) -> None:
    """Two partitions with everything a copy must keep byte for byte."""
    create_topic(bootstrap, topic, 2, {"max.message.bytes": str(LARGE), **KEEP_FOREVER})  # timestamps from 2000
    p = producer(bootstrap, **{"message.max.bytes": LARGE + 100_000})
    for i in range(120):
        key = [None, b"", f"key-{i}".encode()][i % 3]
        value = [None, b"", f"value-{i}".encode() * 5][(i // 3) % 3]  # key set + value None: tombstones
        headers = (
            [("trace", f"t{i}".encode()), ("trace", None), ("tenant", b""), ("trace", b"again")]
            if i % 4 == 0
            else ([("only", b"one")] if i % 4 == 1 else None)
        )
        extra: dict[str, Any] = {"timestamp": OLD_TIMESTAMP + i * 1000} if i % 2 == 0 else {}
        if headers is not None:
            extra["headers"] = headers
        send(p, topic, i % 2, key, value, **extra)
    p.flush(30)

    # Committed transactions: each commit marker takes an offset, leaving gaps in the source.
    tx = producer(bootstrap, **{"transactional.id": f"{topic}-tx"})
    tx.init_transactions(10)
    for t in range(4):
        tx.begin_transaction()
        for i in range(6):
            send(tx, topic, i % 2, f"tx-{t}-{i}".encode(), f"paid-{i}".encode(), headers=[("tx", str(t).encode())])
        tx.commit_transaction(10)

    # Records near 1 MB (the last one is over the 1 MiB Kafka default, allowed by max.message.bytes).
    for i, size in enumerate((1_000_000, 1_048_576, 1_100_000)):
        send(p, topic, i % 2, f"blob-{i}".encode(), bytes([i + 1]) * size, timestamp=OLD_TIMESTAMP - i)
    for i in range(20):  # plain records after the gaps and the large records
        send(p, topic, i % 2, f"tail-{i}".encode(), b"tail")
    p.flush(30)


def test_copy_keeps_every_record_field_through_gaps_and_large_records(clusters, unique) -> None:  # type: ignore[no-untyped-def]
    # The plan carries the source topic's max.message.bytes to the target topic and to the
    # copy's producer.
    topic = f"rich{unique}"
    _seed_rich(clusters.source, topic)
    plan = _plan_and_create(clusters, topic)
    (topic_plan,) = plan.topics
    assert topic_plan.configs.get("max.message.bytes") == str(LARGE)
    admin = AdminClient(client_settings(_settings(clusters.target)))
    (future,) = admin.describe_configs([ConfigResource(ResourceType.TOPIC, topic)]).values()
    assert future.result(timeout=15)["max.message.bytes"].value == str(LARGE)

    for task in topic_plan.slices(include_empty=True):
        assert task.max_message_bytes == LARGE
        copied = copy_partition(task, _pair(clusters))
        source = _planned_source(clusters.source, task)
        assert copied.records == len(source) and copied.error is None

        verified = verify_partition(task, _pair(clusters))
        assert verified.match, verified
        assert verified.source_records == verified.target_records == len(source)
        assert verified.source_checksum == verified.target_checksum
        assert verified.first_difference is None

        # Independent check of the target.
        target = read_partition(clusters.target, task.target_topic, task.partition)
        assert without_offsets(target) == without_offsets(source)
        assert _has_gaps(source), "the transactions should have left offset gaps in the source"
        assert [r["offset"] for r in target] == list(range(len(target)))
        assert verified.offset_map[0] == (source[0]["offset"], 0)
        assert len(verified.offset_map) > 1  # the gaps change the source-to-target offset difference

    # The data really held every special case (guards against a seeding mistake).
    target = [r for p in range(2) for r in read_partition(clusters.target, topic, p)]
    assert any(r["key"] is None for r in target)
    assert any(r["key"] == b"" for r in target)
    assert any(r["value"] is None and r["key"] for r in target)  # tombstones
    assert any(r["value"] == b"" for r in target)
    assert any(r["key"] is None and r["value"] is None for r in target)
    assert any([h[0] for h in r["headers"]].count("trace") == 3 and ("trace", None) in r["headers"] for r in target)
    assert sum(r["timestamp"] <= OLD_TIMESTAMP + 120_000 for r in target) >= 63
    assert sorted(len(r["value"]) for r in target if r["key"] and r["key"].startswith(b"blob"))[-1] == 1_100_000
    assert sum(r["key"] is not None and r["key"].startswith(b"tx-") for r in target) == 24


def test_records_produced_after_planning_are_not_copied(clusters, unique) -> None:  # type: ignore[no-untyped-def]
    topic = f"bounded{unique}"
    create_topic(clusters.source, topic, 2)
    p = producer(clusters.source)
    for i in range(200):
        send(p, topic, i % 2, f"k{i}".encode(), f"before-{i}".encode())
    p.flush(10)

    plan = _plan_and_create(clusters, topic)  # end offsets fixed here
    (topic_plan,) = plan.topics
    for i in range(100):  # the source keeps growing after planning
        send(p, topic, i % 2, f"late{i}".encode(), b"after the plan")
    p.flush(10)

    for task in topic_plan.slices(include_empty=True):
        everything = read_partition(clusters.source, topic, task.partition)
        assert any(r["offset"] >= task.end for r in everything), "late records should be on the source"
        planned = [r for r in everything if r["offset"] < task.end]
        assert len(planned) == 100

        first = copy_partition(task, _pair(clusters))
        assert first.records == 100
        target = read_partition(clusters.target, topic, task.partition)
        assert without_offsets(target) == without_offsets(planned)
        assert not any(r["value"] == b"after the plan" for r in target)

        # A second attempt finds the whole range already there and writes nothing.
        again = copy_partition(task, _pair(clusters))
        assert (again.records, again.resumed_records) == (0, 100)
        assert len(read_partition(clusters.target, topic, task.partition)) == 100

        verified = verify_partition(task, _pair(clusters))
        assert verified.match and verified.source_records == verified.target_records == 100


def _seed_small(bootstrap: str, topic: str) -> None:
    """One partition: a committed transaction first (so source and target offsets differ), then plain records."""
    create_topic(bootstrap, topic, 1, KEEP_FOREVER)  # timestamps from 1970
    tx = producer(bootstrap, **{"transactional.id": f"{topic}-tx"})
    tx.init_transactions(10)
    for t in range(2):
        tx.begin_transaction()
        for i in range(3):
            send(tx, topic, 0, f"tx{t}-{i}".encode(), b"paid")
        tx.commit_transaction(10)
    p = producer(bootstrap)
    for i in range(30):
        send(p, topic, 0, f"k{i}".encode(), f"v{i}".encode(), headers=[("n", str(i).encode())], timestamp=5000 + i)
    p.flush(10)


@pytest.mark.parametrize("case", ["changed", "missing", "missing-last", "extra"])
def test_verify_reports_the_first_difference(clusters, unique, case: str) -> None:  # type: ignore[no-untyped-def]
    topic = f"bad{unique}"
    _seed_small(clusters.source, topic)
    plan = _plan_and_create(clusters, topic)
    (task,) = plan.topics[0].slices(include_empty=True)
    pair = _pair(clusters)
    source = _planned_source(clusters.source, task)
    assert len(source) == 6 + 30 and source[0]["offset"] == 0
    victim_index = 20
    victim = source[victim_index]
    assert victim["offset"] > victim_index  # two commit markers before it: offsets differ from target positions

    if case == "changed":
        # Copy the range, but write one record by hand with another value, as a faulty copier would.
        copy_partition(replace(task, end=victim["offset"]), pair)
        w = producer(clusters.target)
        send(w, topic, 0, victim["key"], b"tampered", headers=victim["headers"], timestamp=victim["timestamp"])
        w.flush(10)
        copy_partition(replace(task, start=victim["offset"] + 1, target_start=victim_index + 1), pair)
    elif case == "missing":
        copy_partition(replace(task, end=victim["offset"]), pair)
        copy_partition(replace(task, start=victim["offset"] + 1, target_start=victim_index), pair)
    elif case == "missing-last":
        copy_partition(replace(task, end=source[-1]["offset"]), pair)
    else:
        copy_partition(task, pair)
        w = producer(clusters.target)
        send(w, topic, 0, b"intruder", b"extra")
        w.flush(10)

    target = read_partition(clusters.target, topic, 0)
    result = verify_partition(task, pair)
    assert not result.match
    assert result.offset_map == []
    assert result.source_records == len(source)
    assert result.target_records == len(target)
    assert result.source_checksum != result.target_checksum
    if case == "changed":
        assert len(target) == len(source)
        assert (result.first_source_offset, result.first_target_offset) == (victim["offset"], victim_index)
        assert result.first_difference == "value differs"
        # A new copy attempt refuses to write after a record it did not write.
        with pytest.raises(ForeignRecordsError, match=f"offset {victim_index} holds a record"):
            copy_partition(task, pair)
        assert len(read_partition(clusters.target, topic, 0)) == len(source)
    elif case == "missing":
        assert len(target) == len(source) - 1
        assert (result.first_source_offset, result.first_target_offset) == (victim["offset"], victim_index)
        assert result.first_difference is not None and "differ" in result.first_difference
    elif case == "missing-last":
        assert len(target) == len(source) - 1
        assert (result.first_source_offset, result.first_target_offset) == (source[-1]["offset"], None)
        assert result.first_difference == "record missing on the target"
    else:
        assert len(target) == len(source) + 1
        assert (result.first_source_offset, result.first_target_offset) == (None, len(source))
        assert result.first_difference == "extra record on the target"
