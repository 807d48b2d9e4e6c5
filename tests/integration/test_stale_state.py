"""Stale and surprising state on real brokers: each case stops before writing, naming topic, offsets, way out.

Each test first makes a verified run the way the pipeline does (tests/runs.py: plan under a lease,
create, copy, verify, record, with the product's copy and verify functions run in this process
instead of Spark: the refusals happen at planning, before any Spark step). Then it changes the
clusters between runs and checks the next run refuses.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import quote

import pytest
from confluent_kafka.admin import AdminClient
from sqlalchemy import update

from harness.data.read import read_partition
from harness.data.seed import create_topic, producer, send
from harness.kafka import ClusterSpec
from harness.servers.ports import free_port
from kafka_migration.exceptions import StaleStateError
from kafka_migration.kafka.clients import KafkaCluster
from kafka_migration.kafka.settings import client_settings
from kafka_migration.ledger import Ledger
from kafka_migration.ledger.schema import checkpoint_topic_ids
from kafka_migration.model.config import ClusterConfig, MigrationOptions
from kafka_migration.run.pipeline import run_migration
from kafka_migration.spark.submit import SparkLauncher
from tests.leaks import leaked
from tests.runs import verified_run

pytestmark = pytest.mark.integration

KAFKA_MIGRATE = str(Path(sys.executable).parent / "kafka-migrate")


def _cluster(role: str, bootstrap: str) -> KafkaCluster:
    return KafkaCluster(ClusterConfig(role, {"bootstrap.servers": bootstrap}))


def _fill(bootstrap: str, topic: str, per_partition: int, tag: str, partitions: int = 2) -> None:
    p = producer(bootstrap)
    for i in range(per_partition * partitions):
        send(p, topic, i % partitions, f"{tag}-{i}".encode(), b"v" * 20)
    p.flush(10)


def _recreate(bootstrap: str, topic: str, partitions: int) -> None:
    admin = AdminClient(client_settings({"bootstrap.servers": bootstrap}))
    if topic in admin.list_topics(timeout=10).topics:
        admin.delete_topics([topic])[topic].result(10)
    deadline = time.monotonic() + 30
    while True:  # deletion is asynchronous: retry until the name is free again
        try:
            create_topic(bootstrap, topic, partitions)
            return
        except Exception:
            assert time.monotonic() < deadline, f"could not recreate {topic}"
            time.sleep(0.2)


def refusal(source: str, target: str, topic: str, ledger: Ledger, state_dir: Path) -> str:
    """The next run, through the pipeline: it must stop at planning, write nothing and hold no lease."""
    before = ledger.runs()
    with pytest.raises(StaleStateError) as refused:
        run_migration(
            ClusterConfig("source", {"bootstrap.servers": source}),
            ClusterConfig("target", {"bootstrap.servers": target}),
            MigrationOptions(include=topic),
            state_dir,
            ledger,
            launch=SparkLauncher(),
        )
    assert ledger.runs() == before  # nothing recorded
    assert ledger.leases.active() == []  # the refused run released its leases
    return str(refused.value)


def _forget_topic_ids(ledger: Ledger) -> None:
    """A ledger written before topic ids were recorded (revision 0002): only the offset rules can tell."""
    with ledger.engine.begin() as c:
        c.execute(update(checkpoint_topic_ids).values(source_topic_id=None, target_topic_id=None))


@pytest.fixture
def ledger(tmp_path: Path) -> Ledger:
    return Ledger.open(f"sqlite:///{tmp_path / 'ledger.db'}")


def test_source_recreated_with_fewer_or_more_records(clusters, unique, ledger: Ledger, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    topic = f"stale-src{unique}"
    create_topic(clusters.source, topic, 2)
    _fill(clusters.source, topic, 50, "a")
    verified_run(clusters.source, clusters.target, topic, ledger)  # checkpoints at 50 per partition
    target_before = [read_partition(clusters.target, topic, p) for p in range(2)]

    _recreate(clusters.source, topic, 2)
    _fill(clusters.source, topic, 10, "b")  # fewer records than the checkpoint: ends at 10
    message = refusal(clusters.source, clusters.target, topic, ledger, tmp_path)
    assert f"source topic {topic} was deleted and recreated since run" in message
    assert "[0] verified below 50" in message and "now: [0] ends at 10; [1] ends at 10" in message
    assert "--rename" in message and f"kafka-migrate checkpoints forget --topic {topic}" in message

    _fill(clusters.source, topic, 100, "c")  # now more records than the checkpoint: offsets alone would pass
    message = refusal(clusters.source, clusters.target, topic, ledger, tmp_path)
    assert "deleted and recreated" in message and "now: [0] ends at 110; [1] ends at 110" in message

    _forget_topic_ids(ledger)  # without topic ids the "fewer" case is still known by its offsets
    _recreate(clusters.source, topic, 2)
    _fill(clusters.source, topic, 10, "d")
    message = refusal(clusters.source, clusters.target, topic, ledger, tmp_path)
    assert f"source topic {topic} now ends before its checkpoints in partition" in message
    assert "[0] ends at 10, verified below 50 by run" in message
    assert [read_partition(clusters.target, topic, p) for p in range(2)] == target_before  # nothing written


def test_target_deleted_truncated_or_recreated_with_fewer_partitions(  # type: ignore[no-untyped-def]
    clusters, unique, ledger: Ledger, tmp_path: Path
) -> None:
    topic = f"stale-tgt{unique}"
    create_topic(clusters.source, topic, 2)
    _fill(clusters.source, topic, 30, "a")
    verified_run(clusters.source, clusters.target, topic, ledger)  # target checkpoints at 30 per partition
    admin = AdminClient(client_settings({"bootstrap.servers": clusters.target}))

    admin.delete_topics([topic])[topic].result(10)
    deadline = time.monotonic() + 30
    while topic in admin.list_topics(timeout=10).topics:
        assert time.monotonic() < deadline
        time.sleep(0.2)
    message = refusal(clusters.source, clusters.target, topic, ledger, tmp_path)
    assert f"target topic {topic} no longer exists, but run" in message
    assert "[0] verified below 30; [1] verified below 30" in message and "checkpoints forget" in message
    assert topic not in admin.list_topics(timeout=10).topics  # the refused run did not create it

    _recreate(clusters.target, topic, 2)  # recreated and refilled by someone: the topic id tells
    _fill(clusters.target, topic, 5, "intruder")
    message = refusal(clusters.source, clusters.target, topic, ledger, tmp_path)
    assert f"target topic {topic} was deleted and recreated since run" in message

    _forget_topic_ids(ledger)  # an older ledger: the end below the checkpoint tells
    message = refusal(clusters.source, clusters.target, topic, ledger, tmp_path)
    assert f"target topic {topic} now ends below what was written there in partition" in message
    assert "[0] ends at 5, verified below 30 by run" in message and "(source below 30)" in message

    _recreate(clusters.target, topic, 1)
    message = refusal(clusters.source, clusters.target, topic, ledger, tmp_path)
    assert f"target topic {topic} has 1 partition, but run" in message and "to partition 1 there" in message
    assert "add partitions on the target" in message  # the partition-count conflict, too


def test_other_clusters_under_the_same_cluster_ids(clusters, unique, ledger: Ledger, kafka_factory) -> None:  # type: ignore[no-untyped-def]
    """A ledger meets clusters that reuse the ids it knows (rebuilt clusters, a restored backup)."""
    topic = f"stale-ids{unique}"
    source_id = _cluster("source", clusters.source).describe().cluster_id
    target_id = _cluster("target", clusters.target).describe().cluster_id
    create_topic(clusters.source, topic, 2)
    _fill(clusters.source, topic, 20, "a")
    verified_run(clusters.source, clusters.target, topic, ledger)
    other_source, other_target = kafka_factory(
        ClusterSpec("other-source", cluster_id=source_id), ClusterSpec("other-target", cluster_id=target_id)
    )
    create_topic(other_source.bootstrap, topic, 2)
    _fill(other_source.bootstrap, topic, 40, "b")  # same name, more records than the checkpoint
    message = refusal(other_source.bootstrap, other_target.bootstrap, topic, ledger, other_source.directory)
    assert f"source topic {topic} was deleted and recreated" in message
    assert f"not the one the ledger knows as {source_id}, use another ledger (--ledger)" in message
    assert f"target topic {topic} no longer exists" in message


def test_cli_exits_2_on_stale_state_and_on_an_unreachable_ledger(
    clusters, unique, ledger: Ledger, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    topic = f"stale-cli{unique}"
    create_topic(clusters.source, topic, 2)
    _fill(clusters.source, topic, 20, "a")
    verified_run(clusters.source, clusters.target, topic, ledger)
    _recreate(clusters.source, topic, 2)
    _fill(clusters.source, topic, 40, "b")
    env = {k: v for k, v in os.environ.items() if not k.startswith("KAFKA_MIGRATION_")}
    base = [KAFKA_MIGRATE, "run", "--source", clusters.source, "--target", clusters.target, "--include", topic]
    base += ["--state-dir", str(tmp_path)]
    result = subprocess.run(
        [*base, "--ledger", str(ledger.engine.url)], capture_output=True, text=True, timeout=120, env=env, check=False
    )
    assert result.returncode == 2, result.stdout + result.stderr
    assert "nothing was written" in result.stderr and f"source topic {topic} was deleted and recreated" in result.stderr

    password = "Planted/pw+4711"  # URL-encoded in the URL, as a password with these characters must be
    dead = f"postgresql://km:{quote(password, safe='')}@127.0.0.1:{free_port()}/ledger"  # nothing listens there
    result = subprocess.run(
        [*base, "--ledger", dead], capture_output=True, text=True, timeout=120, env=env, check=False
    )
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Cannot open the ledger at postgresql+psycopg://km:***@127.0.0.1" in result.stderr
    assert leaked(password, result.stderr, result.stdout) == [] and "Traceback" not in result.stderr


def test_a_failback_onto_a_recreated_original_topic_never_advises_deleting_it(  # type: ignore[no-untyped-def]
    clusters, unique, ledger: Ledger, tmp_path: Path
) -> None:
    """In a failback the target is the original cluster: the same stale state, the other way out."""
    from kafka_migration.cutover.point import Cutover, CutoverTopic, PartitionEnds

    topic = f"stale-fb{unique}"
    create_topic(clusters.source, topic, 1)
    _fill(clusters.source, topic, 20, "a", partitions=1)
    plan = verified_run(clusters.source, clusters.target, topic, ledger)  # the cutover's final run, ends at 20
    source_id = _cluster("source", clusters.source).describe().cluster_id
    target_id = _cluster("target", clusters.target).describe().cluster_id
    cutover = Cutover(
        f"cutover-{unique}", source_id, clusters.source, target_id, clusters.target, "completed", plan.run_id,
        (CutoverTopic(topic, topic, (PartitionEnds(0, 20, 20),)),),
    )  # fmt: skip
    ledger.seed_checkpoints(target_id, source_id, cutover.reverse_checkpoints())  # as prepare_failback does
    _recreate(clusters.source, topic, 1)  # someone recreated the topic on the original cluster
    _fill(clusters.source, topic, 3, "b", partitions=1)

    def back(options: MigrationOptions) -> str:
        with pytest.raises(StaleStateError) as refused:
            run_migration(
                ClusterConfig("source", {"bootstrap.servers": clusters.target}),
                ClusterConfig("target", {"bootstrap.servers": clusters.source}),
                options,
                tmp_path,
                ledger,
                launch=SparkLauncher(),
            )
        return str(refused.value)

    failback = MigrationOptions.from_mapping(cutover.failback_options())
    message = back(failback)
    assert f"target topic {topic} now ends below what was written there in partition 0" in message
    assert (
        f"This run is the failback of cutover {cutover.cutover_id}: target topic {topic} is on the original" in message
    )
    assert (
        "do not delete it, empty it or forget its checkpoints; the failback stopped before writing anything" in message
    )
    assert f"--source {clusters.target} --target {clusters.source} --include '{re.escape(topic)}'" in message
    assert "Delete target topic" not in message and "checkpoints forget" not in message
    assert len(read_partition(clusters.source, topic, 0)) == 3  # nothing written to the original

    ordinary = back(MigrationOptions.from_mapping({**vars(failback), "failback_of": None}))  # the same, not a failback
    assert f"Delete target topic {topic} and forget the checkpoints" in ordinary
