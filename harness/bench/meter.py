"""Peak memory and CPU time of a process and everything it starts, for comparing whole tools.

``TreeMeter`` samples the process tree every 100 ms: the peak of the summed RSS of its live
processes (pages shared between them count in each, as ``ps`` shows them), and the CPU time
each process had when last seen. ``cpu_now()`` reads the live tree at that moment (exact for a
process that is still running, like MirrorMaker 2 when it has caught up). For a tool timed to
its exit, ``cpu_seconds()`` after it sums each process's CPU as last seen: a process loses at
most its last 100 ms, and one that lived less than that is missed. (The rusage of waited-for
children would not do: ``kafka-migrate run`` exits once its results are written and lets Spark
stop by itself, so the Spark processes are never waited for by their parent's parent.)
"""

from __future__ import annotations

import threading
from typing import Any

MiB = 2**20


class TreeMeter:
    """Peak RSS and last-seen CPU seconds of the process ``pid`` and its descendants."""

    def __init__(self, pid: int, every: float = 0.1) -> None:
        import psutil

        self.root = psutil.Process(pid)
        self.every = every
        self.peak_rss = 0
        self.peak_processes = 0
        self.cpu_seen: dict[int, float] = {}
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
        """One look at the tree: updates the peak RSS; returns the tree's CPU seconds as last seen."""
        import psutil

        total = 0
        alive = 0
        with self._lock:
            for process in self._processes():
                try:
                    with process.oneshot():
                        rss = process.memory_info().rss
                        times = process.cpu_times()
                except psutil.Error:
                    continue
                total += rss
                alive += 1
                self.cpu_seen[process.pid] = times.user + times.system
            if total > self.peak_rss:
                self.peak_rss = total
                self.peak_processes = alive
            return sum(self.cpu_seen.values())

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
