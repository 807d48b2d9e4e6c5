"""Planning and target-topic creation on Apache Kafka: build_plan, create_target_topics."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import IsolationLevel, TopicPartition
from confluent_kafka.admin import AdminClient, ConfigResource, ConfigSource, OffsetSpec, ResourceType

from harness.data.seed import create_topic, producer, send
from harness.data.topics import topic_config
from harness.kafka import ClusterSpec
from kafka_migration.exceptions import (
    ClusterUnreachableError,
    ConfigurationError,
    NoTopicsMatchedError,
    TopicConflictError,
)
from kafka_migration.kafka.acls import allows
from kafka_migration.kafka.clients import KafkaCluster
from kafka_migration.kafka.permissions import cluster_operations
from kafka_migration.kafka.settings import client_settings
from kafka_migration.ledger import Ledger, default_ledger_url
from kafka_migration.model.config import ClusterConfig, MigrationOptions
from kafka_migration.model.plan import MigrationPlan
from kafka_migration.run.pipeline import run_migration
from kafka_migration.run.planner import build_plan
from kafka_migration.run.topics import create_target_topics

pytestmark = pytest.mark.integration

DEAD = "127.0.0.1:1"  # nothing listens there: connections are refused


def _cluster(role: str, bootstrap: str) -> KafkaCluster:
    return KafkaCluster(ClusterConfig(role, {"bootstrap.servers": bootstrap}))


def _plan(source: str, target: str, **options: Any) -> MigrationPlan:
    return build_plan(_cluster("source", source), _cluster("target", target), MigrationOptions(**options))


def _admin(bootstrap: str) -> Any:
    return AdminClient(client_settings({"bootstrap.servers": bootstrap}))


def _topics(bootstrap: str) -> dict[str, int]:
    """Topic name -> partition count."""
    return {name: len(t.partitions) for name, t in _admin(bootstrap).list_topics(timeout=10).topics.items()}


def _fill(bootstrap: str, topic: str, partitions: int, per_partition: int) -> None:
    p = producer(bootstrap)
    for i in range(per_partition * partitions):
        send(p, topic, i % partitions, f"k{i}".encode(), f"v{i}".encode())
    p.flush(10)


def test_selection_internal_topics_rename_and_partition_counts(clusters, unique) -> None:  # type: ignore[no-untyped-def]
    prefix = f"sel{unique}"
    wanted = {f"{prefix}.orders": 3, f"{prefix}.empty": 2}
    excluded = f"{prefix}.scratch"
    internal = [f"{prefix}.store-internal", f"{prefix}.mm2.replica", f"__{prefix}_offsets"]
    for name, n in wanted.items():
        create_topic(clusters.source, name, n)
    for name in [excluded, *internal, f"other{unique}"]:
        create_topic(clusters.source, name, 1)
    _fill(clusters.source, f"{prefix}.orders", 3, 10)

    plan = _plan(
        clusters.source,
        clusters.target,
        include=f"(__)?{prefix}.*",
        exclude=f"{prefix}\\.scratch",
        rename="src.{topic}",
    )

    assert {t.source_topic: t.target_topic for t in plan.topics} == {n: f"src.{n}" for n in wanted}
    assert plan.skipped_topics[excluded] == "matches the exclude pattern"
    for name in internal:
        assert plan.skipped_topics[name].startswith("internal topic"), name
    assert f"other{unique}" not in plan.skipped_topics  # out of scope, not "skipped"
    orders = plan.topic(f"{prefix}.orders")
    assert [(p.partition, p.start, p.end, p.target_start) for p in orders.partitions] == [
        (p, 0, 10, 0) for p in range(3)
    ]
    assert [(p.start, p.end) for p in plan.topic(f"{prefix}.empty").partitions] == [(0, 0), (0, 0)]
    assert all(t.create for t in plan.topics)

    target = _cluster("target", clusters.target)
    created = create_target_topics(plan, target)

    assert sorted(created.names) == sorted(f"src.{n}" for n in wanted)
    # The ids come from the wait for the leaders, the same as describing the topics now says.
    assert created.topic_ids == target.topic_ids(created.names) and len(created.topic_ids) == len(wanted)
    on_target = _topics(clusters.target)
    for name, n in wanted.items():
        assert on_target[f"src.{name}"] == n  # same partition count as the source
        assert name not in on_target
    for name in [excluded, *internal]:
        assert name not in on_target and f"src.{name}" not in on_target
    # Running it again is harmless: the topics exist and are kept.
    again = create_target_topics(plan, _cluster("target", clusters.target))
    assert again.names == [] and again.topic_ids == created.topic_ids
    # Without an authorizer the cluster reports every operation: Create there spares the validate_only requests.
    granted = cluster_operations(target)
    assert granted is not None and allows(granted, "Create")

    # An internal topic is selected when the include pattern names it.
    named = _plan(clusters.source, clusters.target, include=f"{prefix}\\.mm2\\.replica", rename="src.{topic}")
    assert [t.source_topic for t in named.topics] == [f"{prefix}.mm2.replica"]


def test_topic_configs_are_copied_except_excluded_ones(clusters, unique) -> None:  # type: ignore[no-untyped-def]
    # Apache Kafka lists every config and labels the ones set on the topic DYNAMIC_TOPIC_CONFIG.
    topic = f"cfg{unique}"
    copied = {"retention.ms": "604800000", "cleanup.policy": "compact", "max.message.bytes": "2097152"}
    excluded = {"min.insync.replicas": "1", "message.timestamp.type": "LogAppendTime"}
    create_topic(clusters.source, topic, 2, {**copied, **excluded})

    plan = _plan(clusters.source, clusters.target, include=topic)
    (topic_plan,) = plan.topics
    # not the source's LogAppendTime: the target's brokers give a new topic CreateTime, so it is not even set
    assert topic_plan.configs == copied
    assert set(topic_plan.skipped_configs) == set(excluded)
    assert all(topic_plan.skipped_configs.values())  # each with its reason

    create_target_topics(plan, _cluster("target", clusters.target))

    admin = _admin(clusters.target)  # keep the client alive until its future is resolved
    (future,) = admin.describe_configs([ConfigResource(ResourceType.TOPIC, topic)]).values()
    # Apache Kafka lists every config; the ones set on the target topic are labelled DYNAMIC_TOPIC_CONFIG
    entries = future.result(timeout=15)
    on_target = {name: e.value for name, e in entries.items() if e.source == ConfigSource.DYNAMIC_TOPIC_CONFIG.value}
    assert on_target == copied  # min.insync.replicas not set
    assert entries["message.timestamp.type"].value == "CreateTime"
    assert entries["min.insync.replicas"].source != ConfigSource.DYNAMIC_TOPIC_CONFIG.value
    assert _topics(clusters.target)[topic] == 2


def test_topic_states_read_every_batch_of_configs(clusters, unique, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # Configs are read DESCRIBE_BATCH topics a request, one request ahead of the answers being read: with
    # batches of 2, five topics take three requests, and every topic gets its own configs and offsets.
    monkeypatch.setattr(KafkaCluster, "DESCRIBE_BATCH", 2)
    names = [f"batch{unique}.{i}" for i in range(5)]
    for i, name in enumerate(names):
        create_topic(clusters.source, name, 1, {"retention.ms": str(3_600_000 * (i + 1))})
    _fill(clusters.source, names[-1], 1, 3)

    states = _cluster("source", clusters.source).topic_states([*names, f"absent{unique}"])

    assert sorted(states) == names
    for i, name in enumerate(names):
        assert states[name].topic_settings() == {"retention.ms": str(3_600_000 * (i + 1))}
        assert states[name].topic_id
    assert states[names[-1]].latest == {0: 3} and states[names[0]].latest == {0: 0}


def test_existing_compatible_target_topics_are_accepted(clusters, unique) -> None:  # type: ignore[no-untyped-def]
    same, wider = f"same{unique}", f"wider{unique}"
    for name in (same, wider):
        create_topic(clusters.source, name, 2)
        _fill(clusters.source, name, 2, 5)
    create_topic(clusters.target, same, 2)  # empty, same partition count
    create_topic(clusters.target, wider, 4)  # empty, more partitions: accepted with a warning

    plan = _plan(clusters.source, clusters.target, include=f"(same|wider){unique}")

    assert {t.source_topic: t.create for t in plan.topics} == {same: False, wider: False}
    assert any("receive nothing" in w for w in plan.topic(wider).warnings)
    assert all(p.target_start == 0 for t in plan.topics for p in t.partitions)
    assert create_target_topics(plan, _cluster("target", clusters.target)).names == []
    assert {k: v for k, v in _topics(clusters.target).items() if k in (same, wider)} == {same: 2, wider: 4}


def test_target_with_fewer_partitions_is_a_conflict_and_nothing_is_created(clusters, unique) -> None:  # type: ignore[no-untyped-def]
    wide, fine = f"wide{unique}", f"fine{unique}"
    create_topic(clusters.source, wide, 4)
    create_topic(clusters.source, fine, 1)
    _fill(clusters.source, fine, 1, 3)
    create_topic(clusters.target, wide, 2)
    before = _topics(clusters.target)

    with pytest.raises(TopicConflictError) as error:
        _plan(clusters.source, clusters.target, include=f"(wide|fine){unique}")

    (conflict,) = error.value.conflicts
    assert f"target topic '{wide}' has 2 partitions but source topic '{wide}' has 4" in conflict
    assert "nothing was written" in str(error.value)
    assert _topics(clusters.target) == before
    assert fine not in before


def test_a_target_whose_brokers_keep_less_is_refused_though_its_topic_sets_nothing(  # type: ignore[no-untyped-def]
    clusters, unique, kafka_factory
) -> None:
    """The target's brokers delete after a minute (log.retention.ms, a broker setting, nothing set on the topic):
    records a run verified there would be gone a minute later. Planning refuses such an existing topic before
    anything is written; a topic the run creates there gets the source's retention set on it."""
    (short,) = kafka_factory(ClusterSpec("short-retention", properties={"log.retention.ms": "60000"}))
    existing, created = f"keepsless{unique}", f"created{unique}"
    for name in (existing, created):
        create_topic(clusters.source, name, 1)
        _fill(clusters.source, name, 1, 3)
    assert topic_config(clusters.source, existing)["retention.ms"].value == "604800000"  # Kafka's default: 7 days
    create_topic(short.bootstrap, existing, 1)
    entry = topic_config(short.bootstrap, existing)["retention.ms"]
    assert (entry.value, entry.source) == ("60000", ConfigSource.STATIC_BROKER_CONFIG.value)

    with pytest.raises(TopicConflictError) as error:
        _plan(clusters.source, short.bootstrap, include=f"(keepsless|created){unique}")

    (conflict,) = error.value.conflicts
    assert "retention.ms is 1 minute on the target (60000) but 7 days on the source (604800000)" in conflict
    assert "nothing was written" in str(error.value) and created not in _topics(short.bootstrap)
    plan = _plan(clusters.source, short.bootstrap, include=created)
    assert plan.topic(created).configs["retention.ms"] == "604800000"
    create_target_topics(plan, _cluster("target", short.bootstrap))
    assert topic_config(short.bootstrap, created)["retention.ms"].value == "604800000"


def test_target_partition_holding_records_is_a_conflict(clusters, unique) -> None:  # type: ignore[no-untyped-def]
    topic = f"held{unique}"
    create_topic(clusters.source, topic, 2)
    _fill(clusters.source, topic, 2, 5)
    create_topic(clusters.target, topic, 2)
    foreign = producer(clusters.target)
    send(foreign, topic, 1, b"foreign", b"written by someone else")  # one foreign record in target partition 1
    foreign.flush(10)

    with pytest.raises(TopicConflictError) as error:
        _plan(clusters.source, clusters.target, include=topic)

    (conflict,) = error.value.conflicts
    assert f"target topic '{topic}' partition 1 already holds records at offsets 0 (1 offset)" in conflict


def test_unreachable_source_or_target_is_named_within_30s(clusters) -> None:  # type: ignore[no-untyped-def]
    """Each role on its own dead address; both planned at once, so the test waits one timeout, not two."""
    before = _topics(clusters.target)

    def attempt(role: str) -> tuple[BaseException | None, float]:
        started = time.monotonic()
        try:
            _plan(DEAD if role == "source" else clusters.source, DEAD if role == "target" else clusters.target)
        except BaseException as exc:
            return exc, time.monotonic() - started
        return None, time.monotonic() - started

    with ThreadPoolExecutor(max_workers=2) as pool:
        outcomes = dict(zip(("source", "target"), pool.map(attempt, ("source", "target")), strict=True))

    for role, (error, elapsed) in outcomes.items():
        assert isinstance(error, ClusterUnreachableError), (role, error)
        assert elapsed < 30, f"{role}: took {elapsed:.1f}s"
        assert f"Cannot reach the {role} cluster at {DEAD}" in str(error)
        other = "target" if role == "source" else "source"
        assert f"the {other} cluster" not in str(error)
    assert _topics(clusters.target) == before


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"include": "orders("}, "include pattern 'orders(' is not a valid regular expression"),
        ({"exclude": "[a-"}, "exclude pattern '[a-' is not a valid regular expression"),
        ({"rename": "src.{topic"}, "Rename template 'src.{topic' is malformed"),
    ],
)
def test_invalid_options_are_configuration_errors(clusters, options: dict[str, str], message: str) -> None:  # type: ignore[no-untyped-def]
    before = _topics(clusters.target)
    with pytest.raises(ConfigurationError) as error:
        _plan(clusters.source, clusters.target, **options)
    assert message in str(error.value)
    assert _topics(clusters.target) == before


def test_no_topic_matches_writes_nothing(clusters, unique) -> None:  # type: ignore[no-untyped-def]
    create_topic(clusters.source, f"lonely{unique}", 1)
    before = _topics(clusters.target)

    with pytest.raises(NoTopicsMatchedError, match=f"matches include 'nothing{unique}.*'"):
        _plan(clusters.source, clusters.target, include=f"nothing{unique}.*")
    # everything in scope excluded: also no match, and the exclusion is reported
    with pytest.raises(NoTopicsMatchedError, match=f"skipped: lonely{unique}"):
        _plan(clusters.source, clusters.target, include=f"lonely{unique}", exclude="lonely.*")

    assert _topics(clusters.target) == before


def test_dry_run_writes_nothing_to_the_target(clusters, unique, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    prefix = f"dry{unique}"
    create_topic(clusters.source, f"{prefix}.a", 3)
    create_topic(clusters.source, f"{prefix}.b", 1)
    _fill(clusters.source, f"{prefix}.a", 3, 4)
    before = _topics(clusters.target)

    outcome = run_migration(
        ClusterConfig("source", {"bootstrap.servers": clusters.source}),
        ClusterConfig("target", {"bootstrap.servers": clusters.target}),
        MigrationOptions(include=f"{prefix}\\..*", dry_run=True),
        tmp_path,
        Ledger.open(default_ledger_url(tmp_path)),
    )

    assert {t.source_topic for t in outcome.plan.topics} == {f"{prefix}.a", f"{prefix}.b"}
    assert all(t.create for t in outcome.plan.topics)
    assert outcome.plan.offset_span == 12  # 3 partitions x 4 records
    assert (outcome.directory / "plan.json").exists()  # the plan is kept locally, for review
    assert outcome.copy == {} and outcome.verify == {}
    assert _topics(clusters.target) == before


def test_new_topics_are_served_once_the_wait_for_them_returns(clusters, unique) -> None:  # type: ignore[no-untyped-def]
    """Apache Kafka publishes a new topic's leader before it has created the partition's log, and answers
    NOT_LEADER meanwhile: the wait returns only once every partition answers (else the copy's first
    requests fail, and are retried one partition at a time with new clients)."""
    names = [f"served{unique}.{i:03d}" for i in range(300)]
    target = _cluster("target", clusters.target)
    assert all(target.create_topics((name, 2, 1, {}) for name in names).values())
    found = target.wait_for_topics(names)
    assert set(found) == set(names) and all(d.partitions == 2 and d.topic_id for d in found.values())
    admin = _admin(clusters.target)  # held: its futures resolve only while it lives
    futures = admin.list_offsets(
        {TopicPartition(n, p): OffsetSpec.latest() for n in names for p in range(2)},
        isolation_level=IsolationLevel.READ_UNCOMMITTED,
        request_timeout=30,
    )
    refused = []
    for tp, future in futures.items():
        try:
            assert future.result(30).offset == 0
        except Exception as exc:  # collected: the assertion names them all
            refused.append(f"{tp.topic}[{tp.partition}]: {exc}")
    assert refused == [], f"{len(refused)} partitions not served yet, e.g. {refused[:3]}"
