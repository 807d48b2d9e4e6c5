"""Scenario 6: scale in topics. Planning at S/50, S/5 and S topics, and the whole CLI run at S/5 (S = 5,000).

* planning: ``planner.build_plan`` in this process, as ``kafka-migrate run`` calls it (ledger checkpoints,
  pending segments, topic ids and the leases of every target topic included; the leases are released
  after each sample): discovery, source describe_configs / list_offsets / describe_topics, target
  checks. Python start-up and the ledger's schema check are not in it (they do not grow with topics).
* whole run: ``kafka-migrate run`` as a subprocess against a fresh target, start-up included, with the
  peak RSS of the CLI process, of the Spark driver JVM and of the Python processes under it, sampled
  from the process tree every 100 ms (psutil).

Every topic has 1 partition and 100 records. The source is seeded once for the whole session.
"""

from __future__ import annotations

import os
import random
import re
import subprocess
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from confluent_kafka import Producer

from harness.bench.common import cli_run_command, cluster_configs, load1, median, say
from harness.bench_kafka import KEY_BYTES, TIMESTAMP_BASE, create_topics
from kafka_migration.clients import client_settings

if TYPE_CHECKING:
    from harness.bench.runner import Session

NAME = "scale"
RECORDS = 100
PREFIX = "scale."
WIDTH = 5  # scale.00000 ... scale.04999
MiB = 2**20
GROWTH_LIMIT = 1.25  # per-topic planning time at S topics over that at S/5: linear (1.0) plus noise
TARGETS = {
    "scale.planning_1000_seconds": ("< 5", lambda v: v < 5),
    "scale.whole_1000_seconds": ("< 20", lambda v: v < 20),
    "scale.planning_growth": (f"<= {GROWTH_LIMIT} (linear or better)", lambda v: v <= GROWTH_LIMIT),
}


def counts(largest: int) -> tuple[int, int, int]:
    """The three planning sizes: S/50, S/5, S (100, 1,000, 5,000 by default)."""
    return max(largest // 50, 1), max(largest // 5, 1), largest


def name(i: int) -> str:
    return f"{PREFIX}{i:0{WIDTH}d}"


def include(count: int) -> str:
    """A pattern matching exactly the first ``count`` topics; ``count`` must be d x 10^k (100, 1000, 5000)."""
    digits = str(count)
    lead, zeros = int(digits[0]), len(digits) - 1
    if digits[1:] != "0" * zeros or len(digits) > WIDTH:
        raise SystemExit(f"scale: topic counts must look like 1, 20, 500, 5000 ({count} does not)")
    return re.escape(PREFIX) + "0" * (WIDTH - zeros - 1) + f"[0-{lead - 1}]" + ("[0-9]" * zeros)


def seed_many(bootstrap: str, count: int, records: int) -> float:
    """``count`` topics x 1 partition x ``records`` records of 200 bytes, by one producer for all topics."""
    started = time.monotonic()
    names = [name(i) for i in range(count)]
    create_topics(bootstrap, dict.fromkeys(names, 1), timeout=300.0)
    rng = random.Random(15)
    pool = [rng.randbytes(200 - KEY_BYTES) for _ in range(256)]
    p = Producer(
        client_settings(
            {
                "bootstrap.servers": bootstrap,
                "linger.ms": 50,
                "compression.type": "lz4",
                "enable.idempotence": True,
                "queue.buffering.max.messages": 1_000_000,
            }
        )
    )
    for topic in names:
        for i in range(records):
            p.produce(topic, pool[i & 255], b"k%09d" % i, partition=0, timestamp=TIMESTAMP_BASE + i)
        p.poll(0)
    if p.flush(300):
        raise RuntimeError("scale seeding: records left unsent after 300 s")
    return time.monotonic() - started


def plan_once(source: str, target: str, count: int, work: Path) -> dict[str, Any]:
    """build_plan over the first ``count`` topics, with a ledger and the leases, as the CLI plans."""
    from kafka_migration.clients import KafkaCluster
    from kafka_migration.config import MigrationOptions
    from kafka_migration.ledger import Ledger
    from kafka_migration.ledger.leases import Holder
    from kafka_migration.pipeline import lease_claim
    from kafka_migration.planner import build_plan, new_run_id

    src_cfg, tgt_cfg = cluster_configs(source, target)
    ledger = Ledger.open(f"sqlite:///{work / 'ledger.db'}")
    run_id = new_run_id("bench")
    claim = lease_claim(ledger, Holder.this_process(run_id), 600.0)
    load = load1()
    started = time.monotonic()
    plan = build_plan(
        KafkaCluster(src_cfg),
        KafkaCluster(tgt_cfg),
        MigrationOptions(include=include(count)),
        run_id=run_id,
        ledger=ledger,
        claim=claim,
    )
    seconds = time.monotonic() - started
    ledger.leases.release(run_id)
    ledger.engine.dispose()
    if len(plan.topics) != count:
        raise RuntimeError(f"scale planning: {len(plan.topics)} topics planned, {count} expected")
    return {"topics": count, "seconds": round(seconds, 3), "load1_at_start": load}


class TreeSampler:
    """Peak RSS of a process tree: the root (the CLI), the Spark JVMs, the Python processes under them."""

    def __init__(self, pid: int, every: float = 0.1) -> None:
        import psutil

        self.root = psutil.Process(pid)
        self.every = every
        self.peak = {"cli": 0, "spark_jvm": 0, "spark_python": 0, "tree": 0}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> TreeSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        import psutil

        while not self._stop.is_set():
            try:
                children = self.root.children(recursive=True)
                now = {"cli": self.root.memory_info().rss, "spark_jvm": 0, "spark_python": 0}
            except psutil.Error:
                return
            parent: dict[int, int] = {}
            kind: dict[int, str] = {}
            rss: dict[int, int] = {}
            for child in children:
                try:
                    parent[child.pid] = child.ppid()
                    kind[child.pid] = "java" if child.name() == "java" else "other"
                    rss[child.pid] = child.memory_info().rss
                except psutil.Error:
                    continue
            for pid, size in rss.items():
                if kind[pid] == "java":
                    now["spark_jvm"] += size
                    continue
                up = parent.get(pid)
                while up is not None and kind.get(up) != "java":
                    up = parent.get(up)
                if up is not None:  # a Python process started by a Spark JVM (driver or worker)
                    now["spark_python"] += size
            now["tree"] = now["cli"] + now["spark_jvm"] + now["spark_python"]
            for key, value in now.items():
                self.peak[key] = max(self.peak[key], value)
            self._stop.wait(self.every)


def whole_run(source: str, target: str, count: int, work: Path) -> dict[str, Any]:
    """``kafka-migrate run`` over the first ``count`` topics, start-up included; peak RSS of its process tree."""
    command = cli_run_command(source, target, include(count), work / "state")
    load = load1()
    started = time.monotonic()
    with open(work / "cli.out", "w") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=os.environ.copy())
        with TreeSampler(process.pid) as sampler:
            code = process.wait()
    seconds = time.monotonic() - started
    output = (work / "cli.out").read_text()
    if code != 0:
        raise RuntimeError(f"scale whole run exited {code}:\n{output[-3000:]}")
    parts = _run_parts(work / "state")
    return {
        "topics": count,
        "records": count * RECORDS,
        "wall_seconds": round(seconds, 3),
        "peak_rss_mib": {k: round(v / MiB, 1) for k, v in sampler.peak.items()},
        "parts": parts,
        "load1_at_start": load,
    }


def _run_parts(state: Path) -> dict[str, Any]:
    """The run's own split of its wall time (plan, start-up, copy, verify, bookkeeping), where it records one."""
    import json

    for report in sorted(state.glob("reports/*/report.json")):
        data = json.loads(report.read_text())
        timings = data.get("timings") or data.get("run", {}).get("timings")
        if timings:
            return dict(timings)
    return {}


def seed(session: Session) -> None:
    largest = counts(session.sizes["scale_topics"])[-1]
    say(f"seeding {largest:,} topics x 1 partition x {RECORDS} records (scale)")
    session.seeding[NAME] = round(seed_many(session.source, largest, RECORDS), 2)
    say(f"  seeded in {session.seeding[NAME]:.1f} s")


def run(session: Session, repeat: int) -> None:
    raw = session.raw.setdefault(NAME, {"planning": {}, "whole": []})
    sizes = counts(session.sizes["scale_topics"])
    for i in range(repeat):
        say(f"scenario 6 (scale), repetition {i + 1}/{repeat}")
        target = session.target.fresh()
        for count in sizes:
            sample = plan_once(session.source, target, count, session.run_dir())
            raw["planning"].setdefault(str(count), []).append(sample)
            say(f"    planning {count:,} topics (build_plan): {sample['seconds']:.2f} s")
        sample = whole_run(session.source, session.target.fresh(), sizes[1], session.run_dir())
        raw["whole"].append(sample)
        rss = sample["peak_rss_mib"]
        say(
            f"    whole run {sizes[1]:,} topics (kafka-migrate run): {sample['wall_seconds']:.1f} s; peak RSS CLI "
            f"{rss['cli']:.0f} MiB, Spark JVM {rss['spark_jvm']:.0f} MiB, Spark Python {rss['spark_python']:.0f} MiB"
        )


def summarize(raw: dict[str, Any], sizes: dict[str, int]) -> dict[str, Any]:
    if not raw.get("whole"):
        return {}
    small, middle, largest = counts(sizes["scale_topics"])
    planning = {int(n): median([s["seconds"] for s in samples]) for n, samples in raw["planning"].items()}
    per_topic = {n: round(seconds / n * 1000, 3) for n, seconds in planning.items()}
    whole = raw["whole"]
    return {
        "scale": {
            "topics": [small, middle, largest],
            "partitions_per_topic": 1,
            "records_per_topic": RECORDS,
            "planning_how": "planner.build_plan in-process with ledger and leases (no Python start-up)",
            "planning_seconds": {str(n): s for n, s in sorted(planning.items())},
            "planning_ms_per_topic": {str(n): v for n, v in sorted(per_topic.items())},
            # The target keys are named for the default sizes (S = 5,000); --scale-topics scales them.
            "planning_1000_seconds": planning[middle],
            "planning_growth": round(per_topic[largest] / per_topic[middle], 3) if per_topic[middle] else None,
            "whole_1000_seconds": median([s["wall_seconds"] for s in whole]),
            "whole_topics": middle,
            "peak_rss_mib": {k: max(s["peak_rss_mib"][k] for s in whole) for k in whole[0]["peak_rss_mib"]},
            "samples": raw,
        }
    }


def table(summary: dict[str, Any]) -> list[str]:
    if "scale" not in summary:
        return []
    s = summary["scale"]
    small, middle, largest = s["topics"]
    plan = s["planning_seconds"]
    ms = s["planning_ms_per_topic"]
    rss = s["peak_rss_mib"]
    return [
        f"{'6 scale in topics (x1 x100)':<28} planning (build_plan): "
        + ", ".join(f"{n:,} topics {plan[str(n)]:.2f} s ({ms[str(n)]:.2f} ms/topic)" for n in (small, middle, largest)),
        f"{'':<28} per-topic growth {middle:,}->{largest:,}: {s['planning_growth']:.2f}x (target <= {GROWTH_LIMIT}); "
        f"planning {middle:,} {s['planning_1000_seconds']:.2f} s (target < 5 s)",
        f"{'':<28} whole run {middle:,} topics (kafka-migrate run, start-up included): {s['whole_1000_seconds']:.1f} s "
        f"(target < 20 s); peak RSS CLI {rss['cli']:.0f} MiB, Spark JVM {rss['spark_jvm']:.0f} MiB, "
        f"Spark Python {rss['spark_python']:.0f} MiB",
    ]


def notes(summary: dict[str, Any]) -> list[str]:
    if "scale" not in summary:
        return []
    return [
        "Scenario 6: planning is timed in-process (planner.build_plan with ledger and leases); the whole run is "
        "`kafka-migrate run` as a subprocess. Topics are 1 partition x 100 records, seeded once per session."
    ]
