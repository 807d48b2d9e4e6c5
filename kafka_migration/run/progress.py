"""Live progress of copy and verification while Spark tasks run.

Spark reports a task's results only when it ends, and one task copies a whole
partition. So each task sends a small UDP datagram to the driver about once a
second (records and bytes so far); the driver adds them up and logs done/total
and rates. Datagrams may be lost: progress is informational, never evidence.

The driver also keeps a small snapshot file next to its results (``SnapshotWriter``: replaced
atomically every couple of seconds), which the console's API reads to show a running run's
progress per partition; ``read_snapshots`` reads the snapshots of a run directory.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import socket
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kafka_migration.model.config import ClusterPair
from kafka_migration.model.text import plural

log = logging.getLogger("kafka_migration.spark")

Address = tuple[str, int]

# How often the driver logs progress (seconds), and how often `kafka-migrate run` prints a progress line when
# its stderr is not a terminal. The CLI asks its driver for a line every second (PROGRESS_SECONDS_CLI) to move
# its bars; Airflow's task logs keep the default.
PROGRESS_SECONDS_ENV = "KAFKA_MIGRATION_PROGRESS_SECONDS"
PROGRESS_SECONDS = 5.0
PROGRESS_SECONDS_CLI = 1.0


def progress_seconds(default: float = PROGRESS_SECONDS) -> float:
    """$KAFKA_MIGRATION_PROGRESS_SECONDS when it is a positive number of seconds, else ``default``."""
    try:
        value = float(os.environ.get(PROGRESS_SECONDS_ENV, ""))
    except ValueError:
        return default
    return value if 0 < value < float("inf") else default


# -- the lines the driver logs, and how `kafka-migrate run` reads them back -----------------------------
# Written by ``ProgressCollector`` (every few seconds) and the Spark jobs (as each topic ends, as Spark starts);
# read by the CLI from the driver's output to move its progress. Writer and reader live here, side by side.


@dataclass(frozen=True)
class SparkUp:
    """The driver's Spark context and Python workers are up (it then waits for the plan, or starts)."""


@dataclass(frozen=True)
class Started:
    """The driver has read the plan: copy and verification begin."""

    topics: int
    partitions: int


@dataclass(frozen=True)
class Records:
    """Records copied or verified so far in one step (datagrams: informational, may lag)."""

    step: str
    done: int
    total: int
    topics_done: int
    topics: int


@dataclass(frozen=True)
class TopicDone:
    """A topic finished a step: exact numbers."""

    step: str
    source_topic: str
    target_topic: str
    status: str
    records: int
    seconds: float
    done: int
    topics: int


Event = SparkUp | Started | Records | TopicDone

_PREFIX = r"kafka_migration\.spark: "
SPARK_UP_LINE = re.compile(_PREFIX + r"\w+: Spark is up \(")  # the driver waits for its plan (spark/driver.py)
_STARTED = re.compile(_PREFIX + r"\w+: ([\d,]+) topics?, ([\d,]+) partitions?, jobs ")
_RECORDS = re.compile(
    _PREFIX + r"(copy|verify) progress: ([\d,]+) of ([\d,]+) records?\b.*?; ([\d,]+) of ([\d,]+) topics? done"
)
_TOPIC_DONE = re.compile(
    r"^\S+ \S+ \S+ "
    + _PREFIX
    + r"(copy|verify) (\S+) -> (\S+): (\w+), ([\d,]+) records? in ([\d.]+) s \(([\d,]+) of ([\d,]+) topics? done\)"
)


def _int(text: str) -> int:
    return int(text.replace(",", ""))


def parse_line(line: str) -> Event | None:
    """What a line of the driver's output says about progress; None for any other line."""
    if "kafka_migration.spark: " not in line:
        return None
    found = _TOPIC_DONE.match(line)
    if found:
        step, source, target, status, records, seconds, done, topics = found.groups()
        return TopicDone(step, source, target, status, _int(records), float(seconds), _int(done), _int(topics))
    found = _RECORDS.search(line)
    if found:
        step, done, total, topics_done, topics = found.groups()
        return Records(step, _int(done), _int(total), _int(topics_done), _int(topics))
    found = _STARTED.search(line)
    if found:
        return Started(_int(found.group(1)), _int(found.group(2)))
    if SPARK_UP_LINE.search(line):
        return SparkUp()
    return None


def topic_done_message(  # noqa: PLR0913 (its caller, spark/driver_jobs.py, is being rewritten elsewhere)
    step: str, source: str, target: str, status: str, records: int, seconds: float, done: int, topics: int
) -> str:
    """The driver's line as a topic finishes a step ('copy orders -> eu.orders: ok, 1 record in 0.1 s (1 of 2
    topics done)'); an error is appended after it by the caller."""
    return (
        f"{step} {source} -> {target}: {status}, {plural(records, 'record')} in {seconds:.1f} s "
        f"({done:,} of {plural(topics, 'topic')} done)"
    )


class ProgressSender:
    """Executor side: throttled ``update(records, bytes)`` for one partition slice."""

    def __init__(self, address: Address | None, topic: str, partition: int, every: float | None = None) -> None:
        self.address = address
        self.key = f"{topic}\x00{partition}"
        self.every = min(1.0, progress_seconds()) if every is None else every
        self._last = 0.0
        self._sock: socket.socket | None = None

    def update(self, records: int, size: int, final: bool = False) -> None:
        if self.address is None:
            return
        now = time.monotonic()
        if not final and now - self._last < self.every:
            return
        self._last = now
        try:
            if self._sock is None:
                self._sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            self._sock.sendto(json.dumps([self.key, records, size]).encode(), self.address)
        except OSError:
            self.address = None  # no driver to tell: carry on silently

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()


class ProgressCollector:
    """Driver side: receives datagrams, logs progress every ``interval`` seconds."""

    def __init__(
        self, step: str, total: int, host: str = "127.0.0.1", interval: float | None = None, topics: int = 0
    ) -> None:
        self.step = step
        self.total = total
        self.interval = progress_seconds() if interval is None else interval
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._sock.bind(("0.0.0.0", 0))
        self._sock.settimeout(0.5)
        self.address: Address = (host, self._sock.getsockname()[1])
        self._latest: dict[str, dict[str, tuple[int, int]]] = {}  # topic -> slice key -> (records, bytes)
        self._first_seen: dict[str, float] = {}  # slice key -> when its first datagram came (epoch seconds)
        self._finished: dict[str, tuple[int, int]] = {}
        self._topics_done = 0
        self._topics = topics
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._threads = [
            threading.Thread(target=self._receive, name="progress-receive", daemon=True),
            threading.Thread(target=self._report, name="progress-report", daemon=True),
        ]

    def __enter__(self) -> ProgressCollector:
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        # Wake the receiver from its blocking wait now: otherwise the step's end waits out its timeout.
        try:
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as wake:
                wake.sendto(b"", ("127.0.0.1", self.address[1]))
        except OSError:
            pass
        for thread in self._threads:
            thread.join(timeout=2)
        self._sock.close()

    def topic_done(self, topic: str, records: int, size: int, topics: int) -> None:
        """Exact numbers from a finished topic replace whatever datagrams said."""
        with self._lock:
            self._latest.pop(topic, None)  # per topic: 1,000 topics done is not 1,000 scans of every slice
            self._finished[topic] = (records, size)
            self._topics_done += 1
            self._topics = topics

    def totals(self) -> tuple[int, int]:
        with self._lock:
            values = [v for slices in self._latest.values() for v in slices.values()] + list(self._finished.values())
        return sum(v[0] for v in values), sum(v[1] for v in values)

    def _receive(self) -> None:
        while not self._stop.is_set():
            try:
                data, _ = self._sock.recvfrom(4096)
                key, records, size = json.loads(data)
            except (TimeoutError, OSError, ValueError):
                continue
            with self._lock:
                topic = key.split("\x00", 1)[0]
                if topic not in self._finished:
                    self._latest.setdefault(topic, {})[key] = (int(records), int(size))
                    self._first_seen.setdefault(key, time.time())

    def snapshot(self) -> dict[str, Any]:
        """What this step has done so far: per partition in flight (topic, partition, records, bytes, seconds
        since its first datagram) and the exact totals of finished topics."""
        now = time.time()
        with self._lock:
            partitions = [
                [topic, int(key.split("\x00", 1)[1]), records, size, round(now - self._first_seen.get(key, now), 3)]
                for topic, slices in self._latest.items()
                for key, (records, size) in slices.items()
            ]
            done = {topic: [records, size] for topic, (records, size) in self._finished.items()}
        return {"total": self.total, "partitions": sorted(partitions), "done": done}

    def _report(self) -> None:
        started = last_time = time.monotonic()
        last_records = last_bytes = 0
        while not self._stop.wait(self.interval):
            records, size = self.totals()
            now = time.monotonic()
            span = max(now - last_time, 1e-6)
            log.info(
                "%s progress: %s of %s (%.1f%%), %s records/s, %.1f MB/s now; %s of %s done; %.0f s elapsed",
                self.step,
                f"{records:,}",
                plural(self.total, "record"),
                100.0 * records / self.total if self.total else 100.0,
                f"{(records - last_records) / span:,.0f}",
                (size - last_bytes) / span / 1e6,
                f"{self._topics_done:,}",
                plural(self._topics, "topic"),
                now - started,
            )
            last_time, last_records, last_bytes = now, records, size


SNAPSHOT_SUFFIX = ".progress"  # not .json: a glob of the results files (copy-job*.json) must not find it


def snapshot_path(results: Path) -> Path:
    """Where the driver writing ``results`` (e.g. ``copy-job0.json``) keeps its progress snapshot."""
    return Path(results).with_suffix(SNAPSHOT_SUFFIX)


class SnapshotWriter:
    """Driver side: every ``every`` seconds, replace ``path`` with the collectors' snapshots (and once at the end).

    Written to a temporary file in the same directory, then renamed over the old one, so a reader never
    sees half a file. A failed write is logged once and the run goes on: progress is never evidence.
    """

    def __init__(
        self, path: Path, run_id: str, step: str, collectors: Mapping[str, ProgressCollector], every: float = 2.0
    ) -> None:
        self.path = Path(path)
        self.run_id = run_id
        self.step = step
        self.collectors = dict(collectors)
        self.every = every
        self.started = time.time()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="progress-snapshot", daemon=True)
        self._failed = False

    def __enter__(self) -> SnapshotWriter:
        self.write()
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self.write(finished=True)

    def _loop(self) -> None:
        while not self._stop.wait(self.every):
            self.write()

    def write(self, finished: bool = False) -> None:
        data = {
            "version": 1,
            "run_id": self.run_id,
            "step": self.step,
            "started": round(self.started, 3),
            "updated": round(time.time(), 3),
            "finished": finished,
            "steps": {kind: collector.snapshot() for kind, collector in self.collectors.items()},
        }
        tmp: str | None = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", dir=self.path.parent)
            with os.fdopen(fd, "w") as out:
                json.dump(data, out, separators=(",", ":"))
            os.replace(tmp, self.path)
        except OSError as exc:
            if not self._failed:
                self._failed = True
                log.warning("progress snapshot %s not written (%s); the run goes on", self.path, exc)
            if tmp is not None:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)


def read_snapshots(directory: Path) -> list[dict[str, Any]]:
    """The progress snapshots in a run directory (one per Spark application); unreadable ones are left out."""
    found = []
    for path in sorted(Path(directory).glob(f"*{SNAPSHOT_SUFFIX}")):
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            continue  # replaced or removed while read: the next poll sees the new one
        if isinstance(data, dict) and data.get("version") == 1:
            found.append(data)
    return found


class SliceResults(list):  # type: ignore[type-arg]
    """The results of ``run_guarded_all``, one per slice, with each slice's (started, ended) epoch
    seconds in ``stamps``: the report places every task on the run's time line."""

    stamps: list[tuple[float, float]]


def run_guarded_all(
    work: Callable[..., Any],
    failed: Callable[[Any, str], Any],
    tasks: list[Any],
    clusters: ClusterPair,
    progress_address: Address | None,
) -> list[Any]:
    """Run each slice of one Spark task with progress; a failure becomes ``failed(slice, message)``, so siblings finish.

    Once a cluster has stopped answering (ClusterTimeoutError), the slices after it are
    reported failed without being attempted: each would wait out the same timeout, and a
    task of many small slices would take that many times longer to fail.
    """
    from kafka_migration.exceptions import ClusterTimeoutError, describe_failure

    results = SliceResults()
    results.stamps = []
    lost: str | None = None
    for task in tasks:
        started = time.time()
        if lost is not None:
            results.append(failed(task, f"not attempted: {lost}"))
            results.stamps.append((started, started))
            continue
        sender = ProgressSender(progress_address, task.source_topic, task.partition)
        try:
            results.append(work(task, clusters, progress=sender.update))
        except ClusterTimeoutError as exc:
            lost = f"{task.source_topic}[{task.partition}] found: {exc}"
            results.append(failed(task, describe_failure(exc)))
        except Exception as exc:
            results.append(failed(task, describe_failure(exc)))
        finally:
            sender.close()
            results.stamps.append((started, time.time()))
    return results
