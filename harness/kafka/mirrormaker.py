"""MirrorMaker 2 in dedicated mode, from the same pinned jar set as the harness's brokers.

``migration_properties`` is the configuration a user writes for a one-way migration from a
source to a target cluster (the bench's "vs MirrorMaker 2" scenario runs it): the identity
replication policy (same topic names), consumer group offsets synced to the target, the
intervals lowered from their production defaults, exactly-once delivery of the data (the
worker's transactional producer, read_committed on the source, the internal REST listener
that dedicated mode needs for it, on loopback), and one replication factor for every topic it
creates: 1 on the harness's one-broker clusters, 3 on its replicated ones
(harness/kafka/replicated.py). ``MirrorMaker`` starts and stops the JVM
(``org.apache.kafka.connect.mirror.MirrorMaker mm2.properties``); ``SourceOffsets`` reads how
far its source connector has committed, from the worker's offsets topic on the target.

Facts checked against the 4.2.1 sources (connect-mirror, connect-runtime):
- ``<source>.consumer.isolation.level`` reaches the source connector's consumer, and the
  connector declares exactly-once support only with read_committed
  (MirrorSourceConnector.exactlyOnceSupport);
- ``<target>.exactly.once.source.support`` is a worker setting (MirrorMakerConfig.workerConfig
  takes the target cluster's properties); with it each poll's records and their source offsets
  are committed in one transaction, so the target's partitions hold a commit marker per
  transaction and their end offsets run ahead of the source's;
- the source offsets live in ``mm2-offsets.<source>.internal`` on the target, keyed
  ``["MirrorSourceConnector", {"cluster", "partition", "topic"}]`` with value ``{"offset": last
  copied offset}`` (MirrorUtils.wrapPartition / wrapOffset);
- a group's checkpoint is translated through the offset syncs (OffsetSyncStore): a group past
  a sync point lands on that point's target offset + 1; syncs are written every
  ``offset.lag.max`` records, after a skipped upstream offset, and at each task commit.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.kafka import jars
from harness.kafka.node import LOG_LEVEL_VARIABLE, write_properties

MAIN_CLASS = "org.apache.kafka.connect.mirror.MirrorMaker"
IDENTITY_POLICY = "org.apache.kafka.connect.mirror.IdentityReplicationPolicy"
SOURCE = "source"
TARGET = "target"
FLOW = f"{SOURCE}->{TARGET}"
SOURCE_CONNECTOR = "MirrorSourceConnector"
OFFSETS_TOPIC = f"mm2-offsets.{SOURCE}.internal"
# Connect's words for a task that died (WorkerTask.doRun): it stays dead while the process runs on.
TASK_KILLED = "Task is being killed and will not recover until manually restarted"


@dataclass(frozen=True)
class Intervals:
    """How often MM2 looks, in seconds. Production defaults: checkpoints and group sync every 60 s,
    new topics and groups every 600 s; a migration lowers them to see groups move within seconds."""

    emit_checkpoints: int = 1
    sync_group_offsets: int = 1
    refresh_groups: int = 5
    refresh_topics: int = 5


# The target producer's settings of kafka-migrate's copy (kafka_migration.kafka.settings.producer_settings),
# so that the comparison is about the tools, not about batching or compression.
PRODUCER = {"compression.type": "lz4", "linger.ms": "20", "batch.size": str(1024 * 1024)}


@dataclass(frozen=True)
class Flow:
    """What a one-way MirrorMaker 2 flow moves and how: the topics and groups matching the regexes, its REST
    port, ``tasks`` tasks per connector, its intervals, the target producer's settings, and the replication
    factor of every topic it creates on the target (the mirrored ones and its own)."""

    topics: str
    groups: str
    rest_port: int
    tasks: int
    intervals: Intervals = Intervals()
    producer: Mapping[str, str] = field(default_factory=lambda: dict(PRODUCER))
    replication_factor: int = 1


def migration_properties(source: str, target: str, flow: Flow) -> dict[str, str]:
    """mm2.properties for a one-way migration ``source`` -> ``target`` (bootstrap servers) of ``flow``; see
    the module docstring."""
    topics, groups, rest_port, tasks = flow.topics, flow.groups, flow.rest_port, flow.tasks
    intervals, producer, replication_factor = flow.intervals, flow.producer, flow.replication_factor
    prefix = f"{FLOW}."
    rf = str(replication_factor)
    return {
        "clusters": f"{SOURCE}, {TARGET}",
        f"{SOURCE}.bootstrap.servers": source,
        f"{TARGET}.bootstrap.servers": target,
        f"{FLOW}.enabled": "true",
        f"{TARGET}->{SOURCE}.enabled": "false",
        # No herder for the reverse flow: by default MM2 starts one anyway, to emit heartbeats into the
        # source, and with it three internal topics and a heartbeats topic there.
        f"{TARGET}->{SOURCE}.emit.heartbeats.enabled": "false",
        f"{prefix}topics": topics,
        f"{prefix}groups": groups,
        "replication.policy.class": IDENTITY_POLICY,
        "tasks.max": str(tasks),
        # Plugins found through their ServiceLoader manifests only, as MM2's own start-up warning advises;
        # the default also scans every class of the class path by reflection, once for the configuration
        # and once for the herder, whose worker settings are the target cluster's (29 s and 23 s in one
        # start here under load, against 1.7 s and 0.1 s with this).
        "plugin.discovery": "service_load",
        f"{TARGET}.plugin.discovery": "service_load",
        # Consumer groups: checkpoints translated and written to the target's groups while these
        # have no members there.
        f"{prefix}emit.checkpoints.enabled": "true",
        f"{prefix}sync.group.offsets.enabled": "true",
        f"{prefix}emit.checkpoints.interval.seconds": str(intervals.emit_checkpoints),
        f"{prefix}sync.group.offsets.interval.seconds": str(intervals.sync_group_offsets),
        f"{prefix}refresh.groups.interval.seconds": str(intervals.refresh_groups),
        f"{prefix}refresh.topics.interval.seconds": str(intervals.refresh_topics),
        # The offset syncs on the target, as the source of a migration is not written to (kafka-migrate
        # writes nothing there either); the default would create mm2-offset-syncs.target.internal on it.
        f"{prefix}offset-syncs.topic.location": TARGET,
        # Exactly-once delivery of the data (KIP-618): transactional writes on the target, only
        # committed records read from the source, and the internal REST server dedicated mode needs for it.
        f"{TARGET}.exactly.once.source.support": "enabled",
        f"{SOURCE}.consumer.isolation.level": "read_committed",
        "dedicated.mode.enable.internal.rest": "true",
        "listeners": f"http://127.0.0.1:{rest_port}",
        **{f"{TARGET}.producer.{key}": value for key, value in producer.items()},
        # The mirrored topics and MM2's own, one factor for all (its defaults assume several brokers).
        "replication.factor": rf,
        "checkpoints.topic.replication.factor": rf,
        "heartbeats.topic.replication.factor": rf,
        "offset-syncs.topic.replication.factor": rf,
        "offset.storage.replication.factor": rf,
        "status.storage.replication.factor": rf,
        "config.storage.replication.factor": rf,
    }


def shown_properties(properties: Mapping[str, str]) -> dict[str, str]:
    """The properties without what changes per run (addresses, the REST port): for reports and docs."""
    hidden = (f"{SOURCE}.bootstrap.servers", f"{TARGET}.bootstrap.servers", "listeners")
    return {key: ("<per run>" if key in hidden else value) for key, value in properties.items()}


class MirrorMakerFailed(RuntimeError):
    """MirrorMaker 2 exited, did not start, or one of its tasks died."""


class MirrorMaker:
    """One dedicated-mode MirrorMaker 2 process; its log is ``directory/mm2.log``."""

    def __init__(self, directory: Path, properties: Mapping[str, str], heap_mb: int = 512) -> None:
        self.directory = directory
        self.properties = dict(properties)
        self.heap_mb = heap_mb
        self.process: subprocess.Popen[bytes] | None = None
        self.started: float | None = None
        self._scanned = 0  # how far check_alive has read the log

    @property
    def log_path(self) -> Path:
        return self.directory / "mm2.log"

    @property
    def pid(self) -> int:
        if self.process is None:
            raise MirrorMakerFailed("MirrorMaker 2 was not started")
        return self.process.pid

    def command(self) -> list[str]:
        """The JVM as a user runs it: full JIT and G1 (a long-running service), the heap bounded."""
        config = write_properties(self.directory / "mm2.properties", self.properties)
        level = os.environ.get(LOG_LEVEL_VARIABLE)  # the harness's log4j2 file: WARN unless asked
        extra = [f"-Dkafka.harness.level={level}"] if level else []
        return [*jars.java_command(MAIN_CLASS, heap_mb=self.heap_mb, fast_start=False, extra=extra), str(config)]

    def start(self) -> MirrorMaker:
        """Launch the JVM and return at once; ``started`` is the launch's monotonic time."""
        self.directory.mkdir(parents=True, exist_ok=True)
        command = self.command()
        with self.log_path.open("ab") as log:
            self.started = time.monotonic()
            self.process = subprocess.Popen(
                command,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                cwd=self.directory,
                start_new_session=True,
            )
        return self

    def check_alive(self) -> None:
        """Raise MirrorMakerFailed when the process has exited or its log says a task died: a dead task's
        partitions are not copied any more, though the process runs on and says nothing else."""
        if self.process is not None and self.process.poll() is not None:
            raise MirrorMakerFailed(f"MirrorMaker 2 exited with {self.process.returncode}:\n{self.log_tail()}")
        try:
            with self.log_path.open("rb") as log:
                log.seek(self._scanned)
                fresh = log.read()
        except FileNotFoundError:
            return
        complete = fresh[: fresh.rfind(b"\n") + 1]
        self._scanned += len(complete)
        for line in complete.decode(errors="replace").splitlines():
            if TASK_KILLED in line:
                first = (self.errors(limit=1) or [line])[0]
                raise MirrorMakerFailed(f"a MirrorMaker 2 task died; its log's first error: {first.strip()}")

    def stop(self, timeout: float = 30.0) -> None:
        """SIGTERM (its shutdown hook stops the connectors); killed when that takes longer than ``timeout``."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except FileNotFoundError:
            return "(no log)"

    def errors(self, limit: int = 5) -> list[str]:
        """The first ERROR lines of its log (for the scenario's notes: a clean run has none)."""
        try:
            found = [line for line in self.log_path.read_text(errors="replace").splitlines() if " ERROR " in line]
        except FileNotFoundError:
            return []
        return found[:limit]


def parse_offset_record(key: bytes | None, value: bytes | None) -> tuple[tuple[str, int], int | None] | None:
    """One record of the worker's offsets topic -> ((topic, partition), last copied source offset), for the
    source connector's records; None for other connectors' records. A tombstone gives None as offset."""
    if key is None:
        return None
    try:
        connector, partition = json.loads(key)
    except (ValueError, TypeError):
        return None
    if connector != SOURCE_CONNECTOR or not isinstance(partition, dict) or partition.get("cluster") != SOURCE:
        return None
    where = (str(partition["topic"]), int(partition["partition"]))
    if value is None:
        return where, None
    return where, int(json.loads(value)["offset"])


class SourceOffsets:
    """How far MM2's source connector has committed each source partition, read (read_committed) from the
    worker's offsets topic on the target: with exactly-once on, an offset there is committed in the same
    transaction as the records up to it."""

    def __init__(self, target: str, timeout: float = 60.0) -> None:
        from confluent_kafka import Consumer

        from kafka_migration.kafka.settings import client_settings

        self.consumer = Consumer(
            client_settings(
                {
                    "bootstrap.servers": target,
                    "group.id": "bench-mm2-offsets-reader",
                    "enable.auto.commit": False,
                    "isolation.level": "read_committed",
                    "fetch.wait.max.ms": 50,
                }
            )
        )
        self.timeout = timeout
        self.assigned = False
        self.copied: dict[tuple[str, int], int] = {}

    def close(self) -> None:
        self.consumer.close()

    def _assign(self) -> bool:
        from confluent_kafka import OFFSET_BEGINNING, TopicPartition

        metadata = self.consumer.list_topics(timeout=self.timeout)
        topic = metadata.topics.get(OFFSETS_TOPIC)
        if topic is None or topic.error is not None or not topic.partitions:
            return False
        self.consumer.assign([TopicPartition(OFFSETS_TOPIC, p, OFFSET_BEGINNING) for p in topic.partitions])
        self.assigned = True
        return True

    def poll(self, wait: float = 0.1) -> dict[tuple[str, int], int]:
        """Read what has been committed since the last call; the last copied offset per source partition."""
        if not self.assigned and not self._assign():
            time.sleep(wait)
            return self.copied
        for message in self.consumer.consume(10_000, wait):
            if message.error() is not None:
                continue
            parsed = parse_offset_record(message.key(), message.value())
            if parsed is None:
                continue
            where, offset = parsed
            if offset is None:
                self.copied.pop(where, None)
            else:
                self.copied[where] = max(offset, self.copied.get(where, -1))
        return self.copied


def caught_up(copied: Mapping[tuple[str, int], int], last_records: Mapping[tuple[str, int], int]) -> bool:
    """Every partition's last record (its offset; -1: an empty partition) copied."""
    return all(last < 0 or copied.get(where, -1) >= last for where, last in last_records.items())


def retriable(error: Any) -> bool:
    """A KafkaError worth another try: marked so, or a group coordinator that is loading or moving (a cluster
    that has just started answers so for a moment; admin results do not always mark it retriable)."""
    from confluent_kafka import KafkaError

    busy = (KafkaError.COORDINATOR_LOAD_IN_PROGRESS, KafkaError.COORDINATOR_NOT_AVAILABLE, KafkaError.NOT_COORDINATOR)
    return bool(error.retriable()) or error.code() in busy


def group_offsets(target: str, groups: Iterable[str], timeout: float = 30.0) -> dict[str, dict[tuple[str, int], int]]:
    """The committed offsets of each group on the target (a group without any: empty). Retriable errors (a
    coordinator still loading) are retried until ``timeout``."""
    from confluent_kafka import ConsumerGroupTopicPartitions, KafkaException
    from confluent_kafka.admin import AdminClient

    from kafka_migration.kafka.settings import client_settings

    admin = AdminClient(client_settings({"bootstrap.servers": target}))
    deadline = time.monotonic() + timeout
    out: dict[str, dict[tuple[str, int], int]] = {}
    for group in groups:
        while True:
            future = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)], request_timeout=timeout)
            try:
                result: Any = future[group].result(timeout=timeout + 5)
                break
            except KafkaException as exc:
                if not retriable(exc.args[0]) or time.monotonic() > deadline:
                    raise
                time.sleep(0.5)
        out[group] = {
            (tp.topic, tp.partition): int(tp.offset)
            for tp in result.topic_partitions or []
            if tp.error is None and tp.offset >= 0
        }
    return out
