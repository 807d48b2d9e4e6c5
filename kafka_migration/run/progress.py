"""Live progress of copy and verification while Spark tasks run.

Spark reports a task's results only when it ends, and one task copies a whole
partition. So each task sends a small UDP datagram to the driver about once a
second (records and bytes so far); the driver adds them up and logs done/total
and rates. Datagrams may be lost: progress is informational, never evidence.
"""

from __future__ import annotations

import json
import logging
import re
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

log = logging.getLogger("kafka_migration.spark")

Address = tuple[str, int]

# The lines the driver logs (``ProgressCollector`` every few seconds, the Spark jobs as each topic ends), as
# ``kafka-migrate run`` reads them from the driver's output to move its progress bars.
# step, source topic, target topic, status, records, seconds, topics done, topics, ": error" or "" (spark/jobs.py)
TOPIC_DONE = "%s %s -> %s: %s, %d records in %.1fs (%d/%d topics done)%s"
RECORDS_LINE = re.compile(r"kafka_migration\.spark: (copy|verify) progress: ([\d,]+) / ([\d,]+) records")
TOPIC_DONE_LINE = re.compile(
    r"^\S+ \S+ \S+ kafka_migration\.spark: (copy|verify) (.+?): (\w+), .*\((\d+)/(\d+) topics done\)"
)


class ProgressSender:
    """Executor side: throttled ``update(records, bytes)`` for one partition slice."""

    def __init__(self, address: Address | None, topic: str, partition: int, every: float = 1.0) -> None:
        self.address = address
        self.key = f"{topic}\x00{partition}"
        self.every = every
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

    def __init__(self, step: str, total: int, host: str = "127.0.0.1", interval: float = 5.0) -> None:
        self.step = step
        self.total = total
        self.interval = interval
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._sock.bind(("0.0.0.0", 0))
        self._sock.settimeout(0.5)
        self.address: Address = (host, self._sock.getsockname()[1])
        self._latest: dict[str, dict[str, tuple[int, int]]] = {}  # topic -> slice key -> (records, bytes)
        self._finished: dict[str, tuple[int, int]] = {}
        self._topics_done = 0
        self._topics = 0
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

    def _report(self) -> None:
        started = last_time = time.monotonic()
        last_records = last_bytes = 0
        while not self._stop.wait(self.interval):
            records, size = self.totals()
            now = time.monotonic()
            span = max(now - last_time, 1e-6)
            log.info(
                "%s progress: %s / %s records (%.1f%%), %s records/s, %.1f MB/s now; %d topics done; %.0fs elapsed",
                self.step,
                f"{records:,}",
                f"{self.total:,}",
                100.0 * records / self.total if self.total else 100.0,
                f"{(records - last_records) / span:,.0f}",
                (size - last_bytes) / span / 1e6,
                self._topics_done,
                now - started,
            )
            last_time, last_records, last_bytes = now, records, size


class SliceResults(list):  # type: ignore[type-arg]
    """The results of ``run_guarded_all``, one per slice, with each slice's (started, ended) epoch
    seconds in ``stamps``: the report places every task on the run's time line."""

    stamps: list[tuple[float, float]]


def run_guarded_all(
    work: Callable[..., Any],
    failed: Callable[[Any, str], Any],
    tasks: list[Any],
    source: Any,
    target: Any,
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
            results.append(work(task, source, target, progress=sender.update))
        except ClusterTimeoutError as exc:
            lost = f"{task.source_topic}[{task.partition}] found: {exc}"
            results.append(failed(task, describe_failure(exc)))
        except Exception as exc:
            results.append(failed(task, describe_failure(exc)))
        finally:
            sender.close()
            results.stamps.append((started, time.time()))
    return results
