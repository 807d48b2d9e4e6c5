"""harness/kafka/mirrormaker.py without a broker: the mm2.properties of a migration, reading MM2's offsets topic,
noticing a dead task. tests/harness/test_mirrormaker.py runs MirrorMaker 2 itself."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.kafka import mirrormaker as mm2

# --- the MM2 configuration ------------------------------------------------------------------------


def _props(**overrides: object) -> dict[str, str]:
    arguments: dict[str, object] = {
        "topics": r"bench\.mm2",
        "groups": r"bench\.mm2\.g\..*",
        "rest_port": 18083,
        "tasks": 4,
    }
    arguments.update(overrides)
    return mm2.migration_properties("127.0.0.1:9092", "127.0.0.1:9093", mm2.Flow(**arguments))  # type: ignore[arg-type]


def test_one_way_flow_between_the_two_clusters_with_the_same_topic_names() -> None:
    props = _props()
    assert props["clusters"] == "source, target"
    assert props["source.bootstrap.servers"] == "127.0.0.1:9092"
    assert props["target.bootstrap.servers"] == "127.0.0.1:9093"
    assert props["source->target.enabled"] == "true"
    assert props["target->source.enabled"] == "false"
    # No herder for the reverse flow: nothing of MM2's is written into the source.
    assert props["target->source.emit.heartbeats.enabled"] == "false"
    assert props["source->target.offset-syncs.topic.location"] == "target"
    assert props["replication.policy.class"] == "org.apache.kafka.connect.mirror.IdentityReplicationPolicy"
    assert props["source->target.topics"] == r"bench\.mm2"
    assert props["source->target.groups"] == r"bench\.mm2\.g\..*"
    assert props["tasks.max"] == "4"


def test_group_offsets_synced_with_lowered_intervals() -> None:
    props = _props(
        intervals=mm2.Intervals(emit_checkpoints=2, sync_group_offsets=3, refresh_groups=7, refresh_topics=9)
    )
    assert props["source->target.sync.group.offsets.enabled"] == "true"
    assert props["source->target.emit.checkpoints.enabled"] == "true"
    assert props["source->target.emit.checkpoints.interval.seconds"] == "2"
    assert props["source->target.sync.group.offsets.interval.seconds"] == "3"
    assert props["source->target.refresh.groups.interval.seconds"] == "7"
    assert props["source->target.refresh.topics.interval.seconds"] == "9"
    defaults = _props()  # lowered from 60 s / 600 s
    assert all(
        int(defaults[f"source->target.{k}.interval.seconds"]) < 60 for k in ("emit.checkpoints", "sync.group.offsets")
    )
    assert all(
        int(defaults[f"source->target.{k}.interval.seconds"]) < 600 for k in ("refresh.groups", "refresh.topics")
    )


def test_exactly_once_with_the_internal_rest_listener_on_loopback() -> None:
    props = _props(rest_port=18099)
    assert props["target.exactly.once.source.support"] == "enabled"  # a worker setting: the target's
    assert props["source.consumer.isolation.level"] == "read_committed"  # else MM2 declines exactly-once
    assert props["dedicated.mode.enable.internal.rest"] == "true"
    assert props["listeners"] == "http://127.0.0.1:18099"


def test_replication_factor_one_for_every_topic_mm2_creates() -> None:
    props = _props()
    for key in (
        "replication.factor",
        "checkpoints.topic.replication.factor",
        "heartbeats.topic.replication.factor",
        "offset-syncs.topic.replication.factor",
        "offset.storage.replication.factor",
        "status.storage.replication.factor",
        "config.storage.replication.factor",
    ):
        assert props[key] == "1", key


def test_the_target_producer_gets_the_projects_batching_and_compression() -> None:
    props = _props()
    assert props["target.producer.compression.type"] == "lz4"
    assert props["target.producer.linger.ms"] == "20"
    assert props["target.producer.batch.size"] == str(1024 * 1024)
    assert "target.producer.acks" not in _props(producer={})


def test_shown_properties_hide_what_changes_per_run() -> None:
    shown = mm2.shown_properties(_props())
    assert shown["source.bootstrap.servers"] == shown["target.bootstrap.servers"] == shown["listeners"] == "<per run>"
    assert shown["tasks.max"] == "4"


# --- MM2's offsets topic and catching up ----------------------------------------------------------


def _key(topic: str, partition: int, connector: str = "MirrorSourceConnector", cluster: str = "source") -> bytes:
    return json.dumps([connector, {"cluster": cluster, "partition": partition, "topic": topic}]).encode()


def test_offset_records_of_the_source_connector_are_read() -> None:
    assert mm2.parse_offset_record(_key("t", 3), b'{"offset":124999}') == (("t", 3), 124999)
    assert mm2.parse_offset_record(_key("t", 3), None) == (("t", 3), None)  # a tombstone
    assert mm2.parse_offset_record(_key("t", 0, connector="MirrorCheckpointConnector"), b'{"offset":0}') is None
    assert mm2.parse_offset_record(_key("t", 0, cluster="target"), b'{"offset":5}') is None
    assert mm2.parse_offset_record(None, b"{}") is None
    assert mm2.parse_offset_record(b"not json", b"{}") is None


def test_caught_up_when_every_partitions_last_record_is_copied() -> None:
    last = {("t", 0): 99, ("t", 1): 49, ("t", 2): -1}  # partition 2 is empty
    assert not mm2.caught_up({}, last)
    assert not mm2.caught_up({("t", 0): 99, ("t", 1): 48}, last)
    assert mm2.caught_up({("t", 0): 99, ("t", 1): 49}, last)
    assert mm2.caught_up({("t", 0): 120, ("t", 1): 49, ("x", 0): 3}, last)


def test_a_dead_task_in_the_log_is_a_failure_though_the_process_runs_on(tmp_path: Path) -> None:
    maker = mm2.MirrorMaker(tmp_path, {})
    maker.check_alive()  # no log yet
    maker.log_path.write_text("[t] WARN Could not alter configuration of topic orders.\n")
    maker.check_alive()
    with maker.log_path.open("a") as log:
        log.write("[t] ERROR Invalid call to OffsetStorageWriter beginFlush() while already flushing\n")
        log.write(f"[t] ERROR ExactlyOnceWorkerSourceTask{{id=MirrorSourceConnector-2}} {mm2.TASK_KILLED} (x)\n")
    with pytest.raises(mm2.MirrorMakerFailed, match=r"task died; its log's first error: .*OffsetStorageWriter"):
        maker.check_alive()
