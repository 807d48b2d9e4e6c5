"""Topic configs against Apache Kafka's real config sources: what travels, what does not, and drift.

The source is a cluster of the test's own, so that its brokers can carry settings of every kind:
static ones in server.properties (``log.segment.bytes``, ``message.max.bytes``), a dynamic
per-broker one (``log.retention.bytes`` on broker 1) and a dynamic cluster-wide default
(``log.cleaner.delete.retention.ms``), each showing on the topic under its own config source.
The topic sets overrides of its own, and every config of MirrorMaker 2's default exclusion list
(read from the connect-mirror jar) that Apache Kafka still accepts. Only the topic's own overrides
reach the created target topic; the broker-level and default values do not (the target's brokers
decide them), nor does anything MM2 excludes; ``max.message.bytes`` is set to the source's effective
value because the copy must fit, while ``cleanup.policy`` and ``message.timestamp.type`` are left to
the target's brokers, which give a new topic the values wanted (their own configs, read first).
Then a source override changes and another is removed: the next run's plan and report show the
drift, and the existing target topic is left as it is.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from confluent_kafka.admin import ConfigResource, ConfigSource, ResourceType

from harness.data.seed import create_topic, producer, send
from harness.data.topics import alter_configs, alter_topic, topic_config
from harness.kafka import ClusterSpec
from harness.kafka.mirrormaker_defaults import config_exclusions
from harness.kafka.tools import kafka_configs
from kafka_migration.ledger import Ledger
from kafka_migration.reports.signoff import generate_report
from kafka_migration.run.topic_configs import (
    AT_TARGET_DEFAULT,
    EFFECTIVE_VALUE,
    EXCLUDED_CONFIGS,
    KEEPS_MORE_DEFAULT,
    KEPT_ON_TARGET,
    NOT_COPIED,
    SET_ON_TOPIC,
)
from tests.runs import verified_run

pytestmark = pytest.mark.integration

KAFKA_MIGRATE = str(Path(sys.executable).parent / "kafka-migrate")
STATIC = {"log.segment.bytes": "536870912", "message.max.bytes": "2097152"}
OVERRIDES = {"retention.ms": "7200000", "segment.ms": "3600000", "max.compaction.lag.ms": "86400000"}
# Values for the configs of MM2's exclusion list (those Apache Kafka 4 still knows as topic configs).
EXCLUDED_VALUES = {
    "follower.replication.throttled.replicas": "*",
    "leader.replication.throttled.replicas": "*",
    "message.timestamp.type": "LogAppendTime",
    "unclean.leader.election.enable": "true",
    "min.insync.replicas": "1",
}


def _sources(bootstrap: str, topic: str) -> dict[str, tuple[str, int]]:
    return {name: (entry.value, int(entry.source)) for name, entry in topic_config(bootstrap, topic).items()}


def _wait_for(bootstrap: str, topic: str, wanted: dict[str, tuple[str, int]]) -> dict[str, tuple[str, int]]:
    """Dynamic broker configs reach a broker through the metadata log: wait until the topic shows them."""
    deadline = time.monotonic() + 30
    while True:
        found = _sources(bootstrap, topic)
        if all(found.get(name) == value for name, value in wanted.items()):
            return found
        assert time.monotonic() < deadline, {name: found.get(name) for name in wanted}
        time.sleep(0.3)


def test_only_topic_overrides_travel_and_a_later_change_shows_as_drift(  # type: ignore[no-untyped-def]
    kafka_factory, clusters, unique: str, tmp_path: Path
) -> None:
    mm2 = config_exclusions()
    assert set(mm2) <= set(EXCLUDED_CONFIGS)  # MirrorMaker 2's list is honoured, and more
    assert set(EXCLUDED_VALUES) <= set(mm2)
    (source,) = kafka_factory(ClusterSpec("config-source", properties=STATIC))
    alter_configs(source.bootstrap, ConfigResource(ResourceType.BROKER, "1"), {"log.retention.bytes": "1073741824"})
    cluster_default = ["--alter", "--entity-type", "brokers", "--entity-default"]
    kafka_configs(source.bootstrap, *cluster_default, "--add-config", "log.cleaner.delete.retention.ms=3600000")
    topic = f"configs{unique}"
    create_topic(source.bootstrap, topic, 2, {**OVERRIDES, **EXCLUDED_VALUES})
    on_source = _wait_for(
        source.bootstrap,
        topic,
        {
            "segment.bytes": ("536870912", ConfigSource.STATIC_BROKER_CONFIG.value),
            "max.message.bytes": ("2097152", ConfigSource.STATIC_BROKER_CONFIG.value),
            "retention.bytes": ("1073741824", ConfigSource.DYNAMIC_BROKER_CONFIG.value),
            "delete.retention.ms": ("3600000", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG.value),
            **{k: (v, ConfigSource.DYNAMIC_TOPIC_CONFIG.value) for k, v in {**OVERRIDES, **EXCLUDED_VALUES}.items()},
        },
    )
    assert on_source["cleanup.policy"] == ("delete", ConfigSource.DEFAULT_CONFIG.value)
    p = producer(source.bootstrap)
    for i in range(20):
        send(p, topic, i % 2, f"k{i}".encode(), b"v")
    p.flush(15)

    ledger = Ledger.open(f"sqlite:///{tmp_path / 'ledger.db'}")
    plan = verified_run(source.bootstrap, clusters.target, topic, ledger).topic(topic)

    on_target = _sources(clusters.target, topic)
    set_on_target = {n: v for n, (v, s) in on_target.items() if s == ConfigSource.DYNAMIC_TOPIC_CONFIG.value}
    assert set_on_target == {
        **OVERRIDES,  # the topic's own overrides, nothing else of the source's
        "max.message.bytes": "2097152",  # the source's effective value: the target's default is smaller
    }
    # What the compatibility check compares, and the timestamps the copy keeps, from the target's defaults.
    assert on_target["cleanup.policy"] == ("delete", ConfigSource.DEFAULT_CONFIG.value)
    assert on_target["message.timestamp.type"] == ("CreateTime", ConfigSource.DEFAULT_CONFIG.value)
    for name in ("segment.bytes", "retention.bytes", "delete.retention.ms"):  # the target's brokers decide these
        assert on_target[name][1] == ConfigSource.DEFAULT_CONFIG.value and on_target[name] != on_source[name], name
    assert on_target["min.insync.replicas"][1] != ConfigSource.DYNAMIC_TOPIC_CONFIG.value
    assert plan.config_decisions == {
        **{name: SET_ON_TOPIC for name in OVERRIDES},
        **{name: NOT_COPIED + EXCLUDED_CONFIGS[name] for name in EXCLUDED_VALUES if name != "message.timestamp.type"},
        "cleanup.policy": AT_TARGET_DEFAULT.format(value="cleanup.policy=delete", broker="log.cleanup.policy"),
        "max.message.bytes": EFFECTIVE_VALUE,
        "message.timestamp.type": AT_TARGET_DEFAULT.format(
            value="message.timestamp.type=CreateTime", broker="log.message.timestamp.type"
        ),
        # What the topic keeps is compared by effective value: the target's brokers keep more than the source's
        # 1 GiB per partition, so their default stands (a smaller one would be set: test_target_keeps.py).
        "retention.bytes": KEEPS_MORE_DEFAULT.format(
            there="retention.bytes=-1 (no limit)",
            here="retention.bytes=1073741824 (1 GiB)",
            broker="log.retention.bytes",
        ),
    }

    # Drift: one override changes, one is removed (the source's broker default applies again).
    alter_topic(source.bootstrap, topic, {"retention.ms": "3600000", "segment.ms": None})
    _wait_for(source.bootstrap, topic, {"retention.ms": ("3600000", ConfigSource.DYNAMIC_TOPIC_CONFIG.value)})
    drift = [
        "config drift: retention.ms is 3600000 on the source topic but 7200000 on the target topic",
        f"--entity-name {topic} --add-config retention.ms=3600000",
        "config drift: segment.ms is 604800000 on the source topic but 3600000 on the target topic",
    ]
    env = {k: v for k, v in os.environ.items() if not k.startswith("KAFKA_MIGRATION_")}
    dry = subprocess.run(
        [
            *(KAFKA_MIGRATE, "run", "--dry-run", "--source", source.bootstrap, "--target", clusters.target),
            *("--include", topic, "--ledger", str(ledger.engine.url), "--state-dir", str(tmp_path)),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=env,
    )
    assert dry.returncode == 0, dry.stdout + dry.stderr
    assert all(line in dry.stdout for line in drift), dry.stdout
    assert "configs: the existing target topic's own (a run does not change them)" in dry.stdout
    assert f"max.compaction.lag.ms, retention.ms: {KEPT_ON_TARGET}" in dry.stdout  # segment.ms: no longer set

    send(p, topic, 0, b"after", b"the change")
    p.flush(15)
    second = verified_run(source.bootstrap, clusters.target, topic, ledger)
    report = json.loads(generate_report(ledger, second.run_id, tmp_path / "reports").json.read_text())
    (row,) = report["topics"]
    assert row["configs_copied"] == {"max.message.bytes": "2097152"}  # sizes the copy's producer only
    markdown = (tmp_path / "reports" / second.run_id / "report.md").read_text()
    assert "none, existing target topic not changed" in markdown
    assert row["config_decisions"]["retention.ms"] == KEPT_ON_TARGET
    assert all(any(part in w for w in report["warnings"]) for part in drift), report["warnings"]
    assert _sources(clusters.target, topic)["retention.ms"] == on_target["retention.ms"]  # left as it was
