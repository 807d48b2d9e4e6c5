"""The replicated scenario's runs and checks: a clean target between runs, what a topic's replicas are, and
the ceiling, Apache Kafka's own perf tools (kafka-consumer-perf-test, kafka-producer-perf-test) from the
harness's jar set, with their output parsed."""

from __future__ import annotations

import re
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.bench.common import load1
from harness.bench.mirrormaker.tools import launch_metered
from harness.kafka import jars

TOPIC = "bench.replicated"
PERF_TOPIC = "bench.replicated.perf"  # the producer perf test's topic on the target
PARTITIONS = 8
REPLICATION_FACTOR = 3
TOOLS = ("ours", "mirrormaker", "ceiling")
LABELS = {"ours": "kafka-migrate", "mirrormaker": "MirrorMaker 2", "ceiling": "Kafka perf tools"}
PERF_HEAP_MB = 512
CONSUMER_PERF = "org.apache.kafka.tools.ConsumerPerformance"
PRODUCER_PERF = "org.apache.kafka.tools.ProducerPerformance"
# kafka-migrate's producer (kafka_migration.kafka.settings.producer_settings) as Java producer properties, so
# that the ceiling's writes are batched, compressed and acknowledged as ours are.
PERF_PRODUCER = {
    "acks": "all",
    "enable.idempotence": "true",
    "linger.ms": "20",
    "batch.size": str(1024 * 1024),
    "compression.type": "lz4",
}


def rotation(repetition: int) -> tuple[str, ...]:
    """Each tool goes first in turn."""
    shift = repetition % len(TOOLS)
    return TOOLS[shift:] + TOOLS[:shift]


# --- the perf tools' output (pure: tests/harness/test_bench_replicated.py) ---------------------------


def parse_consumer_perf(output: str) -> dict[str, float]:
    """kafka-consumer-perf-test's result: its CSV header and the line under it, as numbers (the times as
    given are left out). Raises when the output holds no result."""
    lines = [line.strip() for line in output.splitlines()]
    for i, line in enumerate(lines[:-1]):
        if line.startswith("start.time,"):
            names = [n.strip() for n in line.split(",")]
            values = [v.strip() for v in lines[i + 1].split(",")]
            if len(values) != len(names):
                break
            return {n: float(v) for n, v in zip(names, values, strict=True) if not n.endswith(".time")}
    raise ValueError(f"no kafka-consumer-perf-test result in its output:\n{output[-2000:]}")


_PRODUCED = re.compile(
    r"^(?P<records>\d+) records sent, (?P<rate>[\d.]+) records/sec \((?P<mb>[\d.]+) MB/sec\), "
    r"(?P<avg>[\d.]+) ms avg latency, (?P<max>[\d.]+) ms max latency",
    re.M,
)


def parse_producer_perf(output: str) -> dict[str, float]:
    """kafka-producer-perf-test's final line (its last ``N records sent, R records/sec``): records, rate, MB/s,
    latencies, and the seconds it measured (records / rate). Raises when there is none."""
    found = list(_PRODUCED.finditer(output))
    if not found:
        raise ValueError(f"no kafka-producer-perf-test result in its output:\n{output[-2000:]}")
    m = found[-1]
    records, rate = int(m["records"]), float(m["rate"])
    return {
        "records": records,
        "records_per_second": rate,
        "mb_per_second": float(m["mb"]),
        "avg_latency_ms": float(m["avg"]),
        "max_latency_ms": float(m["max"]),
        "seconds": round(records / rate, 3) if rate else float("nan"),
    }


def consumer_perf_command(source: str, records: int, group: str) -> list[str]:
    return [
        *jars.java_command(CONSUMER_PERF, heap_mb=PERF_HEAP_MB, fast_start=False),
        "--bootstrap-server",
        source,
        "--topic",
        TOPIC,
        "--num-records",
        str(records),
        "--group",
        group,
        "--timeout",
        "60000",
    ]


def producer_perf_command(target: str, records: int, record_bytes: int) -> list[str]:
    return [
        *jars.java_command(PRODUCER_PERF, heap_mb=PERF_HEAP_MB, fast_start=False),
        "--bootstrap-server",
        target,
        "--topic",
        PERF_TOPIC,
        "--num-records",
        str(records),
        "--record-size",
        str(record_bytes),
        "--throughput",
        "-1",
        "--command-property",
        *(f"{k}={v}" for k, v in PERF_PRODUCER.items()),
    ]


# --- runs against the clusters --------------------------------------------------------------------


def run_ceiling(source: str, target: str, run_dir: Path, records: int, record_bytes: int, tag: str) -> dict:
    """Kafka's consumer perf test reading ``records`` from the source, then its producer perf test writing as
    many of ``record_bytes`` with acks=all into an RF-3 topic of the target; each launch to exit."""
    from harness.bench.seeding import create_topics

    sample: dict[str, Any] = {"load1_at_start": load1()}
    command = consumer_perf_command(source, records, f"bench-replicated-perf-{tag}")
    code, wall, cpu, figures, output = launch_metered(command, run_dir / "consumer-perf.log")
    if code != 0:
        raise RuntimeError(f"kafka-consumer-perf-test exited {code}:\n{output[-3000:]}")
    parsed = parse_consumer_perf(output)
    if parsed["data.consumed.in.nMsg"] < records:
        raise RuntimeError(f"kafka-consumer-perf-test read {parsed['data.consumed.in.nMsg']:.0f} of {records:,}")
    sample["consumer"] = {"seconds": wall, "cpu_seconds": cpu, **figures, "tool": parsed}

    create_topics(target, {PERF_TOPIC: PARTITIONS}, replication_factor=REPLICATION_FACTOR)
    sample["producer_load1_at_start"] = load1()
    command = producer_perf_command(target, records, record_bytes)
    code, wall, cpu, figures, output = launch_metered(command, run_dir / "producer-perf.log")
    if code != 0:
        raise RuntimeError(f"kafka-producer-perf-test exited {code}:\n{output[-3000:]}")
    parsed_producer = parse_producer_perf(output)
    written = sum(end_offsets(target, PERF_TOPIC, PARTITIONS).values())
    if parsed_producer["records"] != records or written < records:
        raise RuntimeError(f"kafka-producer-perf-test sent {parsed_producer['records']:,}, target holds {written:,}")
    sample["producer"] = {"seconds": wall, "cpu_seconds": cpu, **figures, "tool": parsed_producer}
    sample["replicas"] = replicas(target, PERF_TOPIC)
    sample["seconds"] = max(sample["consumer"]["seconds"], sample["producer"]["seconds"])
    return sample


def _admin(bootstrap: str) -> Any:
    from confluent_kafka.admin import AdminClient

    from kafka_migration.kafka.settings import client_settings

    return AdminClient(client_settings({"bootstrap.servers": bootstrap}))


def end_offsets(bootstrap: str, topic: str, partitions: int) -> dict[int, int]:
    from harness.bench.seeding import end_offsets as ends

    return {p: end for (_, p), end in ends(bootstrap, {topic: partitions}).items()}


def replicas(bootstrap: str, topic: str) -> dict[str, Any]:
    """A topic's replication factor (each partition's replica count: the least and the most), its in-sync
    replicas at the least, and its effective min.insync.replicas."""
    from confluent_kafka.admin import ConfigResource

    client = _admin(bootstrap)
    metadata = client.list_topics(topic, timeout=30).topics[topic]
    if metadata.error is not None:
        raise RuntimeError(f"{topic}: {metadata.error}")
    counts = [len(p.replicas) for p in metadata.partitions.values()]
    in_sync = [len(p.isrs) for p in metadata.partitions.values()]
    resource = ConfigResource(ConfigResource.Type.TOPIC, topic)
    configs = client.describe_configs([resource])[resource].result(timeout=30)
    return {
        "replication_factor_min": min(counts),
        "replication_factor_max": max(counts),
        "in_sync_min": min(in_sync),
        "min_insync_replicas": int(configs["min.insync.replicas"].value),
    }


def clean_target(bootstrap: str, timeout: float = 120.0) -> list[str]:
    """Delete every topic of the target but Kafka's own (``__*``): the copied topic, the perf test's, MM2's
    internal ones; wait until the metadata no longer lists them. Returns what was deleted."""
    client = _admin(bootstrap)
    names = sorted(t for t in client.list_topics(timeout=30).topics if not t.startswith("__"))
    if names:
        for future in client.delete_topics(names, operation_timeout=60).values():
            future.result(timeout=90)
    deadline = time.monotonic() + timeout
    while names and (left := sorted(set(names) & set(client.list_topics(timeout=30).topics))):
        if time.monotonic() > deadline:
            raise RuntimeError(f"target topics not gone after {timeout:g} s: {left}")
        time.sleep(0.2)
    return names


def delete_groups(bootstrap: str, prefix: str) -> None:
    """Delete the source's consumer groups the perf test left (``prefix``*): nothing of a run stays behind."""
    client = _admin(bootstrap)
    listed = client.list_consumer_groups().result(timeout=30)
    groups: Sequence[str] = [g.group_id for g in listed.valid if g.group_id.startswith(prefix)]
    if groups:
        for future in client.delete_consumer_groups(list(groups), request_timeout=30).values():
            future.result(timeout=60)


def counts_equal(counts: Mapping[int, int], ends: Mapping[int, int]) -> bool:
    return all(counts.get(p, -1) == end for p, end in ends.items())
