"""Peak memory and CPU time of a process and everything it starts: the bench's one process sampler.

``TreeMeter(pid)`` looks at the process ``pid`` (default: the bench itself) and its descendants every
``every`` seconds (100 ms by default) and keeps, over the processes alive at each look:

- the peak of the tree's summed RSS and how many processes it had then (``peak_rss``,
  ``peak_processes``; pages shared between processes count in each, as ``ps`` shows them): a whole
  tool, e.g. MirrorMaker 2 (scenarios 7 and 9);
- the peak of each kind (``peak_by_kind``): ``root`` (the process itself), ``spark_jvm`` (its ``java``
  descendants), ``spark_python`` (a process below one of those JVMs: the Python a Spark JVM started)
  and ``tree`` (the three summed): a ``kafka-migrate run`` (scenario 6);
- with ``workers`` (command-line markers, e.g. ``WORKER_MARKERS``), the descendants that are PySpark
  Python workers: the largest single RSS, the largest sum and every pid seen (scenario 1). A process
  that matches no marker is looked at again during its first 3 s: between fork and exec it still
  shows its parent's command line;
- the CPU time each process had when last seen (``cpu_seen``). ``cpu_now()`` reads the live tree at
  that moment (exact for a process that is still running, like MirrorMaker 2 when it has caught up).
  For a tool timed to its exit, ``cpu_seconds()`` after it sums each process's CPU as last seen: a
  process loses at most its last look's interval, and one that lived less than that is missed. (The
  rusage of waited-for children would not do: ``kafka-migrate run`` exits once its results are written
  and lets Spark stop by itself, so the Spark processes are never waited for by their parent's parent.)
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from typing import Any

MiB = 2**20
# The command lines of PySpark's Python workers: the daemon, and the workers it forks (or starts).
WORKER_MARKERS = ("pyspark.daemon", "pyspark.worker", "pyspark/daemon.py", "pyspark/worker.py")
KINDS = ("root", "spark_jvm", "spark_python", "tree")
YOUNG = 3.0  # seconds during which a process's command line is read again


class TreeMeter:
    """Peak RSS (in all, by kind, of PySpark workers) and last-seen CPU seconds of ``pid`` and its descendants."""

    def __init__(self, pid: int | None = None, every: float = 0.1, workers: Iterable[str] = ()) -> None:
        import psutil

        self.root = psutil.Process(pid)
        self.every = every
        self.workers = tuple(workers)
        self.peak_rss = 0
        self.peak_processes = 0
        self.peak_by_kind = dict.fromkeys(KINDS, 0)
        self.cpu_seen: dict[int, float] = {}
        self.worker_max_single = 0
        self.worker_max_total = 0
        self.worker_pids: set[int] = set()
        self.samples = 0
        self._first_seen: dict[int, float] = {}
        self._is_worker: dict[int, bool] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="tree-meter", daemon=True)

    def __enter__(self) -> TreeMeter:
        self.sample()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _processes(self) -> list[Any]:
        import psutil

        try:
            return [self.root, *self.root.children(recursive=True)]
        except psutil.Error:
            return []

    def sample(self) -> float:
        """One look at the tree: updates the peaks; returns the tree's CPU seconds as last seen."""
        import psutil

        seen: dict[int, tuple[Any, int, bool, int]] = {}  # pid -> (process, parent pid, is a JVM, RSS)
        with self._lock:
            for process in self._processes():
                try:
                    with process.oneshot():
                        rss = process.memory_info().rss
                        times = process.cpu_times()
                        parent = process.ppid()
                        java = process.name() == "java"
                except psutil.Error:
                    continue
                seen[process.pid] = (process, parent, java, rss)
                self.cpu_seen[process.pid] = times.user + times.system
            self.samples += 1
            self._tree_peaks(seen)
            if self.workers:
                self._worker_peaks(seen)
            return sum(self.cpu_seen.values())

    def _tree_peaks(self, seen: dict[int, tuple[Any, int, bool, int]]) -> None:
        total = sum(rss for *_, rss in seen.values())
        if total > self.peak_rss:
            self.peak_rss = total
            self.peak_processes = len(seen)
        root = self.root.pid
        now = {"root": seen[root][3] if root in seen else 0, "spark_jvm": 0, "spark_python": 0}
        for pid, (_, parent, java, rss) in seen.items():
            if pid == root:
                continue
            if java:
                now["spark_jvm"] += rss
                continue
            up = parent
            while up in seen and up != root and not seen[up][2]:
                up = seen[up][1]
            if up in seen and up != root:  # below a JVM of the tree: a Python process a Spark JVM started
                now["spark_python"] += rss
        now["tree"] = sum(now.values())
        for kind, value in now.items():
            self.peak_by_kind[kind] = max(self.peak_by_kind[kind], value)

    def _worker_peaks(self, seen: dict[int, tuple[Any, int, bool, int]]) -> None:
        import psutil

        now = time.monotonic()
        for pid in [p for p in self._first_seen if p not in seen]:
            del self._first_seen[pid]
            self._is_worker.pop(pid, None)
        total = 0
        for pid, (process, _, _, rss) in seen.items():
            first = self._first_seen.setdefault(pid, now)
            if not self._is_worker.get(pid) and now - first < YOUNG:
                try:
                    command = " ".join(process.cmdline())
                except psutil.Error:
                    continue
                self._is_worker[pid] = any(marker in command for marker in self.workers)
            if not self._is_worker.get(pid):
                continue
            self.worker_pids.add(pid)
            total += rss
            self.worker_max_single = max(self.worker_max_single, rss)
        self.worker_max_total = max(self.worker_max_total, total)

    def cpu_seconds(self) -> float:
        """The tree's CPU seconds, each process as last seen."""
        with self._lock:
            return sum(self.cpu_seen.values())

    def cpu_now(self) -> float:
        """CPU seconds of the tree now: the live processes read at once, the gone ones as last seen."""
        return self.sample()

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            self.sample()

    def figures(self) -> dict[str, Any]:
        return {"peak_rss_mib": round(self.peak_rss / MiB, 1), "processes_at_peak": self.peak_processes}
