"""Outcomes of copy and verification jobs, as written by Spark and read by the CLI and DAG."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from kafka_migration.model.bulk import collector_paused

OK = "ok"
FAILED = "failed"
MISMATCH = "mismatch"
# Verification could not read a side (a cluster unreachable): nothing is known, neither match nor mismatch.
UNVERIFIED = "unverified"


@dataclass
class TopicOutcome:
    """One topic's result in one step (copy or verify)."""

    source_topic: str
    target_topic: str
    status: str
    seconds: float
    partitions: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None
    # Topics that shared this topic's Spark job (1: its own job). Shared jobs make ``seconds`` the
    # job's time, not the topic's: per-topic time is the sum of its partitions' task seconds.
    job_topics: int = 1

    @property
    def task_seconds(self) -> float:
        """Sum of this topic's partition task times: its own share of the work, also in a shared job."""
        return round(sum(float(p.get("seconds") or 0.0) for p in self.partitions), 3)

    @property
    def records(self) -> int:
        key = "records" if self.partitions and "records" in self.partitions[0] else "source_records"
        return sum(int(p.get(key, 0)) for p in self.partitions)

    @property
    def bytes(self) -> int:
        return sum(int(p.get("bytes", 0)) for p in self.partitions)


@dataclass
class StepResults:
    step: str  # "copy" or "verify"
    run_id: str
    jobs: list[int]
    topics: dict[str, TopicOutcome]
    started_at: str
    seconds: float
    # Epoch seconds: when the Spark application's driver started, and when it was ready to run tasks
    # (context up and the plan read). None in results written before these were recorded.
    driver_started: float | None = None
    ready: float | None = None

    @property
    def ok(self) -> bool:
        return all(t.status == OK for t in self.topics.values())

    def write(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(asdict(self), indent=2, sort_keys=True))
        tmp.replace(path)

    @classmethod
    @collector_paused()
    def read(cls, path: Path) -> StepResults:
        data = json.loads(Path(path).read_text())
        data["topics"] = {k: TopicOutcome(**v) for k, v in data["topics"].items()}
        return cls(**data)


def merge(results: list[StepResults]) -> dict[str, TopicOutcome]:
    merged: dict[str, TopicOutcome] = {}
    for result in results:
        merged.update(result.topics)
    return merged
