"""What every benchmark scenario shares: logging, medians and rates, the machine, the Apache Kafka
clusters (a target started afresh per repetition), the Spark settings of the project's runs, and the
table's row format."""

from __future__ import annotations

import collections
import math
import os
import platform
import re
import shutil
import statistics
import time
from pathlib import Path
from typing import Any

from harness.kafka import KafkaCluster, start_cluster

RECORD_BYTES = 200
MB = 1_000_000

_started = time.monotonic()


class _Spark:
    """The Spark settings of every project run: the product's defaults, as ``kafka-migrate run`` uses them."""

    def __init__(self) -> None:
        from kafka_migration.spark.submit import SparkSettings

        self.settings = SparkSettings()

    def use(self, master: str | None) -> None:
        from kafka_migration.spark.submit import SparkSettings

        if master:
            self.settings = SparkSettings(master=master)


SPARK = _Spark()


def say(message: str) -> None:
    print(f"[bench {time.monotonic() - _started:7.1f}s] {message}", flush=True)


def elapsed() -> float:
    return round(time.monotonic() - _started, 1)


def median(values: list[float]) -> float:
    return float(statistics.median(values)) if values else float("nan")


def load1() -> float:
    return round(os.getloadavg()[0], 2)


def rates(records: int, seconds: float) -> dict[str, float]:
    if not seconds or math.isnan(seconds):
        return {"records_per_second": float("nan"), "mb_per_second": float("nan")}
    return {
        "records_per_second": round(records / seconds, 1),
        "mb_per_second": round(records * RECORD_BYTES / MB / seconds, 2),
    }


def ratio(numerator: float, denominator: float) -> float:
    return round(numerator / denominator, 3) if denominator else float("nan")


def fmt(value: float, digits: int = 1) -> str:
    if math.isnan(value):
        return "-"
    return f"{value:,.{digits}f}"


TABLE_HEAD = (
    f"{'scenario':<28} {'run':<26} {'records':>10} {'median s':>9} {'rec/s':>10} {'MB/s':>7} "
    f"{'wall s':>8} {'rec/s wall':>10}"
)


def table_row(scenario: str, run: str, records: int, sec: float, wall: float) -> str:
    r = rates(records, sec)
    rw = rates(records, wall)
    return (
        f"{scenario:<28} {run:<26} {records:>10,} {fmt(sec, 2):>9} {fmt(r['records_per_second'], 0):>10} "
        f"{fmt(r['mb_per_second'], 2):>7} {fmt(wall, 2):>8} {fmt(rw['records_per_second'], 0):>10}"
    )


def progress(kind: str, sample: dict[str, Any], seconds_key: str = "seconds") -> None:
    sec = sample.get(seconds_key) or sample["wall_seconds"]
    extra = ""
    if "wall_seconds" in sample and seconds_key != "wall_seconds":
        extra = f", wall {sample['wall_seconds']:.1f} s"
    if "worker_rss_max_single_bytes" in sample:
        extra += f", peak worker RSS {sample['worker_rss_max_single_bytes'] / 2**20:.0f} MiB"
    say(
        f"    {kind}: {sample['records']:,} records in {sec:.2f} s = {sample['records'] / sec:,.0f} rec/s"
        f"{extra} (load {sample['load1_at_start']})"
    )


def describe_machine() -> dict[str, Any]:
    import confluent_kafka
    import psutil
    import pyspark

    cpu_model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu_model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    java = ""
    try:
        import subprocess

        out = subprocess.run(["java", "-version"], check=False, capture_output=True, text=True, timeout=30)
        java = (out.stderr or out.stdout).splitlines()[0]
    except Exception:
        pass
    return {
        "nproc": os.cpu_count(),
        "cpus_usable": len(os.sched_getaffinity(0)),
        "ram_bytes": psutil.virtual_memory().total,
        "ram_gib": round(psutil.virtual_memory().total / 2**30, 1),
        "cpu_model": cpu_model,
        "platform": platform.platform(),
        "python": platform.python_version(),
        "pyspark": pyspark.__version__,
        "confluent_kafka": getattr(confluent_kafka, "__version__", None) or str(confluent_kafka.version()),
        "librdkafka": confluent_kafka.libversion()[0],
        "java": java,
        "broker": broker_description(),
        "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
    }


def broker_description() -> str:
    from harness.kafka import jars

    return (
        f"Apache Kafka {jars.kafka_version()} (pinned Maven jars), one-node KRaft clusters (broker and controller "
        f"in one JVM, -Xmx{BROKER_HEAP_MB}m, G1 and full JIT), data on local disk"
    )


# The bench's brokers run as a production broker does (G1, C1 and C2), not the tests' fast-start flags
# (C1 only, serial collector): the tools' throughput is what is measured.
BROKER_HEAP_MB = 512


# Settings for the bench's 10,000 partitions on one node (scenario 6), harmless for the other scenarios: index
# files of 1 MiB instead of 10 MiB (each partition's active segment maps two: 20,000 maps of a process's 65,530
# (vm.max_map_count) either way, but 20 GB less mapped and preallocated), and retention checked every 5 minutes
# (Kafka's default; the tests' 2 s walks 10,000 logs every 2 s). One open segment file per partition: 10,000 file
# descriptors per broker, within `ulimit -n` 20,000 here. A broker creating thousands of partitions on a busy host
# can miss its controller heartbeats (9 s by default) and be fenced, which takes every leader away: 60 s.
BENCH_BROKER_PROPERTIES = {
    "log.index.size.max.bytes": str(1024 * 1024),
    "log.retention.check.interval.ms": "300000",
    "broker.session.timeout.ms": "60000",
}


def start_broker(name: str, directory: Path) -> KafkaCluster:
    """A one-node Apache Kafka cluster from the pinned jar set, with a cluster id of its own and its request
    metrics on JMX (harness.kafka.metrics)."""
    return start_cluster(
        name, directory, heap_mb=BROKER_HEAP_MB, fast_start=False, jmx=True, properties=BENCH_BROKER_PROPERTIES
    )


# A stopped target holding this many partitions or more is removed when the session closes, not before the next
# run: on this host, right after a broker directory of 10,000 partitions was removed, the next broker's creating
# 10,000 topics took 61.7 s of its system CPU and 90 s, against 16.2 s and 43 s beside a directory left in place
# (docs/benchmarks.md, scenario 6). Removed at once, it billed the filesystem's aftermath
# to the next run. Smaller targets go at once: the copy scenarios' hold gigabytes in a few files.
DEFER_REMOVAL_PARTITIONS = 1_000


def partition_count(data_dir: Path) -> int:
    """The partition directories in a broker's log directory (0 when there is none)."""
    try:
        with os.scandir(data_dir) as entries:
            return sum(1 for entry in entries if entry.is_dir())
    except FileNotFoundError:
        return 0


class Target:
    """The target cluster: a new one (new cluster id, empty) for every repetition; the old one is removed, at
    once or, holding many partitions, when the session closes (DEFER_REMOVAL_PARTITIONS)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.cluster: KafkaCluster | None = None
        self.starts = 0
        self.start_seconds: list[float] = []
        self.left: list[Path] = []

    def fresh(self) -> str:
        self.stop()
        self.starts += 1
        self.cluster = start_broker(f"bench-target-{self.starts}", self.directory)
        self.start_seconds.append(round(self.cluster.started_seconds or 0.0, 2))
        return self.cluster.bootstrap

    def stop(self) -> None:
        if self.cluster is not None:
            self.cluster.stop()
            if partition_count(self.cluster.data_dir) >= DEFER_REMOVAL_PARTITIONS:
                self.left.append(self.cluster.directory)
            else:
                shutil.rmtree(self.cluster.directory, ignore_errors=True)
            self.cluster = None

    def close(self) -> None:
        """Stop the target and remove every directory left for the end."""
        self.stop()
        for directory in self.left:
            shutil.rmtree(directory, ignore_errors=True)
        self.left.clear()


class SparkOutput:
    """Keeps the tail of spark-submit's output; shows the progress lines (all lines with -v)."""

    _PROGRESS = re.compile(r"kafka_migration\.spark: (.*progress: .*)")

    def __init__(self, verbose: bool) -> None:
        self.verbose = verbose
        self.tail: collections.deque[str] = collections.deque(maxlen=80)
        self.written_at: float | None = None  # monotonic time of the driver's "results written" line

    def __call__(self, line: str) -> None:
        from kafka_migration.spark.driver import results_written

        self.tail.append(line)
        if self.written_at is None and results_written(line):
            self.written_at = time.monotonic()
        if self.verbose:
            print(f"      | {line}", flush=True)
            return
        found = self._PROGRESS.search(line)
        if found:
            print(f"      spark: {found.group(1)}", flush=True)


def cluster_configs(source: str, target: str) -> tuple[Any, Any]:
    from kafka_migration.model.config import ClusterConfig

    return (
        ClusterConfig("source", {"bootstrap.servers": source}),
        ClusterConfig("target", {"bootstrap.servers": target}),
    )


def cli_run_command(source: str, target: str, include: str, state_dir: Path) -> list[str]:
    """``kafka-migrate run`` as a user types it, with the bench's Spark master: for subprocess runs."""
    import sys

    cli = Path(sys.executable).with_name("kafka-migrate")
    return [
        *([str(cli)] if cli.exists() else [sys.executable, "-m", "kafka_migration.cli"]),
        "run",
        "--source",
        source,
        "--target",
        target,
        "--include",
        include,
        "--state-dir",
        str(state_dir),
        *(["--master", SPARK.settings.master] if SPARK.settings.master else []),
    ]
