"""The bench's session, shared by the runner and every scenario: the clusters, the sizes, the samples."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

from harness.bench.common import Target, start_broker


class Session:
    """One source cluster seeded once, a target restarted per repetition, and the samples taken. A scenario
    with clusters of its own (replicated) enters them into ``resources`` and keeps them in ``clusters``: the
    session stops them when it closes, also after a failure."""

    def __init__(self, work: Path, sizes: dict[str, int], verbose: bool) -> None:
        self.work = work
        self.sizes = sizes
        self.verbose = verbose
        self.raw: dict[str, Any] = {}
        self.seeding: dict[str, float] = {}
        self.source_cluster = start_broker("bench-source", work / "brokers")
        self.source = self.source_cluster.bootstrap
        self.target = Target(work / "brokers")
        self.runs = 0
        self.resources = contextlib.ExitStack()
        self.clusters: dict[str, Any] = {}

    def close(self) -> None:
        try:
            self.resources.close()
        finally:
            self.target.close()
            self.source_cluster.stop()

    def run_dir(self) -> Path:
        self.runs += 1
        path = self.work / f"run-{self.runs:03d}"
        path.mkdir(parents=True)
        return path
