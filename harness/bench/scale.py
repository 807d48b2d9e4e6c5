"""Scenario 6: scale in topics. Planning at S/100, S/10 and S/2 topics, and whole CLI runs at S/10, S/2 and S
(S = 10,000: whole runs at 1,000, 5,000 and 10,000 topics), with the requests each run sends to each cluster.

* planning: ``planner.build_plan`` in this process, as ``kafka-migrate run`` calls it (ledger checkpoints,
  pending segments, topic ids and the leases of every target topic included; the leases are released
  after each sample): discovery, source describe_configs / list_offsets / describe_topics, target
  checks. Python start-up and the ledger's schema check are not in it (they do not grow with topics).
* whole run: ``kafka-migrate run`` as a subprocess against a fresh target, start-up included, with the
  peak RSS of the CLI process, of the Spark driver JVM and of the Python processes under it, sampled
  from the process tree every 100 ms (meter.py), and the run's own split of its wall time (report.json
  ``timings``: plan, Spark start-up, copy, verification, bookkeeping).
* requests: what every client sent to each cluster, counted by the brokers themselves per request type
  (harness.kafka.metrics: Produce, Fetch, Metadata, ListOffsets, ...; nothing is added to the clients):
  around each planning sample (the driver's planning alone) and around each whole run (driver and tasks).
  Per topic, a count that grows with the topic count is a request of ours that grows with it.

Every topic has 1 partition and 100 records. The source is seeded once for the whole session: topics
created 500 per CreateTopics request, records by a producer per 500 topics.
"""

from __future__ import annotations

import os
import random
import re
import subprocess
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from confluent_kafka import KafkaException, Producer
from confluent_kafka.admin import AdminClient, NewTopic

from harness.bench.common import cli_run_command, cluster_configs, load1, median, say
from harness.bench.meter import MiB, TreeMeter
from harness.bench.seeding import KEY_BYTES, TIMESTAMP_BASE
from harness.kafka import metrics
from kafka_migration.kafka.settings import client_settings

if TYPE_CHECKING:
    from harness.bench.session import Session

NAME = "scale"
RECORDS = 100
PREFIX = "scale."
WIDTH = 5  # scale.00000 ... scale.09999
CREATE_BATCH = 500  # topics per CreateTopics request when seeding (a KRaft controller bounds records per request)
GROWTH_LIMIT = 1.25  # per-topic time at S/2 topics over that at S/10: linear (1.0) plus noise
LARGEST_LIMIT = 120.0  # seconds for the whole run at S topics (issue 26: 10,000 topics in under 2 minutes)
WARM_LIMIT = 10.0  # seconds for the whole run at S/10 topics against a warmed target (issue 46)
# The target keys are named for the default sizes (S = 10,000); --scale-topics scales them.
TARGETS = {
    "scale.planning_1000_seconds": ("< 5", lambda v: v < 5),
    "scale.planning_growth": (f"<= {GROWTH_LIMIT} (linear or better)", lambda v: v <= GROWTH_LIMIT),
    "scale.whole_1000_seconds": ("< 20", lambda v: v < 20),
    "scale.whole_growth": (f"<= {GROWTH_LIMIT} (linear or better)", lambda v: v <= GROWTH_LIMIT),
    "scale.whole_10000_seconds": (f"< {LARGEST_LIMIT:.0f}", lambda v: v < LARGEST_LIMIT),
    "scale.whole_warm_1000_seconds": (f"<= {WARM_LIMIT:.0f}", lambda v: v <= WARM_LIMIT),
}


def counts(largest: int) -> tuple[int, int, int]:
    """The planning sizes: S/100, S/10, S/2 (100, 1,000, 5,000 by default; S itself is planned by its whole run)."""
    return max(largest // 100, 1), max(largest // 10, 1), max(largest // 2, 1)


def whole_counts(largest: int) -> tuple[int, int, int]:
    """The whole-run sizes: S/10, S/2, S (1,000, 5,000, 10,000 by default)."""
    return max(largest // 10, 1), max(largest // 2, 1), largest


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
    """``count`` topics x 1 partition x ``records`` records of 200 bytes."""
    started = time.monotonic()
    names = [name(i) for i in range(count)]
    create_many(bootstrap, names)
    say(f"  {count:,} topics created in {time.monotonic() - started:.1f} s ({CREATE_BATCH} per CreateTopics request)")
    rng = random.Random(15)
    pool = [rng.randbytes(200 - KEY_BYTES) for _ in range(256)]
    settings = client_settings(
        {
            "bootstrap.servers": bootstrap,
            "linger.ms": 50,
            "compression.type": "lz4",
            "enable.idempotence": True,
            "queue.buffering.max.messages": 1_000_000,
        }
    )
    # A producer per CREATE_BATCH topics: librdkafka walks every topic a client knows to find a record's
    # (rd_kafka_topic_find), so one producer for 10,000 topics spent minutes on lookups alone.
    producers = []
    for first in range(0, len(names), CREATE_BATCH):
        p = Producer(settings)
        producers.append(p)
        for topic in names[first : first + CREATE_BATCH]:
            for i in range(records):
                p.produce(topic, pool[i & 255], b"k%09d" % i, partition=0, timestamp=TIMESTAMP_BASE + i)
            p.poll(0)
    if any(p.flush(300) for p in producers):
        raise RuntimeError("scale seeding: records left unsent after 300 s")
    return time.monotonic() - started


def create_many(bootstrap: str, names: list[str], timeout: float = 300.0) -> None:
    """Topics of 1 partition, CREATE_BATCH per request, then wait until every one has a leader."""
    admin = AdminClient(client_settings({"bootstrap.servers": bootstrap}))
    for i in range(0, len(names), CREATE_BATCH):
        futures = admin.create_topics(
            [NewTopic(n, 1, 1) for n in names[i : i + CREATE_BATCH]], operation_timeout=60, request_timeout=120
        )
        for future in futures.values():
            future.result(timeout=timeout)
    deadline = time.monotonic() + timeout
    pending = set(names)
    while pending:
        try:
            topics = admin.list_topics(timeout=60).topics
        except KafkaException as exc:  # a broker busy creating thousands of logs may not answer in time
            if time.monotonic() > deadline:
                raise
            say(f"  waiting for the new topics' leaders: {exc}")
            time.sleep(1.0)
            continue
        pending = {
            n
            for n in pending
            if n not in topics
            or topics[n].error is not None
            or any(p.leader < 0 for p in topics[n].partitions.values())
        }
        if pending and time.monotonic() > deadline:
            raise RuntimeError(f"scale seeding: {len(pending)} topics without a leader after {timeout:.0f}s")
        if pending:
            time.sleep(1.0)


class Requests:
    """The requests both clusters answered between ``__enter__`` and ``__exit__``, per request type (JMX)."""

    def __init__(self, source: Any, target: Any) -> None:
        self.clusters = {"source": source, "target": target}
        self.before: dict[str, Any] = {}
        self.counted: dict[str, Any] = {}

    def _sample(self) -> dict[str, Any]:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=2) as pool:
            futures = {role: pool.submit(metrics.request_totals, c.jmx_port) for role, c in self.clusters.items()}
            return {role: future.result() for role, future in futures.items()}

    def __enter__(self) -> Requests:
        self.before = self._sample()
        return self

    def __exit__(self, *exc: object) -> None:
        if exc[0] is None:
            after = self._sample()
            self.counted = {role: metrics.difference(after[role], self.before[role]) for role in self.clusters}


def plan_once(session: Session, target: Any, count: int, work: Path) -> dict[str, Any]:
    """build_plan over the first ``count`` topics, with a ledger and the leases, as the CLI plans; the requests
    it sent to each cluster."""
    from kafka_migration.kafka.clients import KafkaCluster
    from kafka_migration.ledger import Ledger
    from kafka_migration.ledger.leases import Holder
    from kafka_migration.model.config import MigrationOptions
    from kafka_migration.run.claims import lease_claim
    from kafka_migration.run.planner import build_plan, new_run_id

    src_cfg, tgt_cfg = cluster_configs(session.source, target.bootstrap)
    ledger = Ledger.open(f"sqlite:///{work / 'ledger.db'}")
    run_id = new_run_id("bench")
    claim = lease_claim(ledger, Holder.this_process(run_id), 600.0)
    load = load1()
    with Requests(session.source_cluster, target) as requests:
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
    return {"topics": count, "seconds": round(seconds, 3), "requests": requests.counted, "load1_at_start": load}


def whole_run(session: Session, target: Any, count: int, work: Path) -> dict[str, Any]:
    """``kafka-migrate run`` over the first ``count`` topics, start-up included; peak RSS of its process tree,
    the run's timings and the requests it sent to each cluster."""
    command = cli_run_command(session.source, target.bootstrap, include(count), work / "state")
    load = load1()
    with Requests(session.source_cluster, target) as requests:
        started = time.monotonic()
        with open(work / "cli.out", "w") as out:
            process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=os.environ.copy())
            with TreeMeter(process.pid) as meter:
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
        "peak_rss_mib": {("cli" if k == "root" else k): round(v / MiB, 1) for k, v in meter.peak_by_kind.items()},
        "parts": parts,
        "plan_lines": _plan_lines(output),
        "requests": requests.counted,
        "load1_at_start": load,
    }


def _plan_lines(output: str) -> int:
    """Lines of the plan the run printed (a summary above 20 topics, whatever the topic count)."""
    lines = output.splitlines()
    first = next((i for i, line in enumerate(lines) if line.startswith("Plan ")), None)
    if first is None:
        return 0
    last = next((i for i in range(first + 1, len(lines)) if not lines[i].startswith("  ")), len(lines))
    return last - first


def _run_parts(state: Path) -> dict[str, Any]:
    """The run's own split of its wall time (plan, start-up, copy, verify, bookkeeping), where it records one."""
    import json

    for report in sorted(state.glob("reports/*/report.json")):
        data = json.loads(report.read_text())
        timings = data.get("timings") or data.get("run", {}).get("timings")
        if timings:
            return dict(timings)
    return {}


WARM_PREFIX = "warm."
WARM_RECORDS = 10


def warm_target(bootstrap: str, count: int) -> float:
    """Bring a fresh target broker's JVM to a long-running one's state: ``count`` other topics created and
    written as a run would (idempotent, acks=all), so that the timed run does not pay the JIT compilation of
    the broker's topic-creation and write paths (a fresh broker spent 5.4 CPU-s creating its first 1,000
    topics, 3.0-3.4 s each next 1,000). A migration's target has usually been up for a while."""
    started = time.monotonic()
    names = [f"{WARM_PREFIX}{i:0{WIDTH}d}" for i in range(count)]
    create_many(bootstrap, names)
    producer = Producer(client_settings({"bootstrap.servers": bootstrap, "linger.ms": 5, "enable.idempotence": True}))
    for topic in names:
        for i in range(WARM_RECORDS):
            producer.produce(topic, b"w" * 100, b"k%09d" % i, partition=0)
        producer.poll(0)
    if producer.flush(120):
        raise RuntimeError("scale warm-up: records left unsent after 120 s")
    time.sleep(3.0)  # let the broker's background work after the creations settle, as after any busy minute
    return time.monotonic() - started


def seed(session: Session) -> None:
    largest = session.sizes["scale_topics"]
    say(f"seeding {largest:,} topics x 1 partition x {RECORDS} records (scale)")
    session.seeding[NAME] = round(seed_many(session.source, largest, RECORDS), 2)
    say(f"  seeded in {session.seeding[NAME]:.1f} s")


def run(session: Session, repeat: int) -> None:
    raw = session.raw.setdefault(NAME, {"planning": {}, "whole": {}})
    largest = session.sizes["scale_topics"]
    for i in range(repeat):
        say(f"scenario 6 (scale), repetition {i + 1}/{repeat}")
        session.target.fresh()
        for count in counts(largest):
            sample = plan_once(session, session.target.cluster, count, session.run_dir())
            raw["planning"].setdefault(str(count), []).append(sample)
            say(f"    planning {count:,} topics (build_plan): {sample['seconds']:.2f} s; {_per_topic(sample, count)}")
        for count in whole_counts(largest):
            session.target.fresh()
            sample = whole_run(session, session.target.cluster, count, session.run_dir())
            raw["whole"].setdefault(str(count), []).append(sample)
            rss = sample["peak_rss_mib"]
            say(
                f"    whole run {count:,} topics (kafka-migrate run): {sample['wall_seconds']:.1f} s "
                f"({_parts(sample['parts'])}); plan printed in {sample['plan_lines']} lines; peak RSS CLI "
                f"{rss['cli']:.0f} MiB, Spark JVM {rss['spark_jvm']:.0f} MiB, "
                f"Spark Python {rss['spark_python']:.0f} MiB"
            )
            say(f"      requests: {_per_topic(sample, count)}")
        tenth = whole_counts(largest)[0]
        session.target.fresh()
        warmed = warm_target(session.target.cluster.bootstrap, tenth)
        sample = whole_run(session, session.target.cluster, tenth, session.run_dir())
        sample["warm_up_seconds"] = round(warmed, 2)
        raw.setdefault("warm", {}).setdefault(str(tenth), []).append(sample)
        say(
            f"    whole run {tenth:,} topics, target warmed by {tenth:,} other topics ({warmed:.1f} s): "
            f"{sample['wall_seconds']:.1f} s ({_parts(sample['parts'])})"
        )
        say(f"      requests: {_per_topic(sample, tenth)}")


def _parts(parts: dict[str, Any]) -> str:
    return ", ".join(f"{k} {v:.1f}" for k, v in parts.items() if k not in ("overlap", "wall")) or "no timings"


def per_topic(requests: dict[str, dict[str, Any]], topics: int) -> dict[str, dict[str, float]]:
    """Requests per topic, per cluster and request type."""
    return {
        role: {kind: round(v["count"] / topics, 4) for kind, v in kinds.items()} for role, kinds in requests.items()
    }


def _per_topic(sample: dict[str, Any], topics: int) -> str:
    shown = []
    for role, kinds in per_topic(sample["requests"], topics).items():
        top = ", ".join(f"{kind} {n:.3g}" for kind, n in list(kinds.items())[:7])
        shown.append(f"{role} {top or 'none'}")
    return "per topic: " + "; ".join(shown)


def _median_requests(samples: list[dict[str, Any]]) -> dict[str, dict[str, dict[str, float]]]:
    """Median count and broker milliseconds per cluster and request type over the samples."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    for role in ("source", "target"):
        kinds = {kind for s in samples for kind in s.get("requests", {}).get(role, {})}
        out[role] = {
            kind: {
                field: median([s["requests"][role].get(kind, {}).get(field, 0) for s in samples])
                for field in ("count", "ms")
            }
            for kind in kinds
        }
        out[role] = dict(sorted(out[role].items(), key=lambda kv: -kv[1]["count"]))
    return out


def summarize(raw: dict[str, Any], sizes: dict[str, int]) -> dict[str, Any]:
    if not raw.get("whole"):
        return {}
    largest = sizes["scale_topics"]
    _small, tenth, half = counts(largest)
    planning = {int(n): median([s["seconds"] for s in samples]) for n, samples in raw["planning"].items()}
    plan_ms = {n: round(seconds / n * 1000, 3) for n, seconds in planning.items()}
    whole = {int(n): samples for n, samples in raw["whole"].items()}
    wall = {n: median([s["wall_seconds"] for s in samples]) for n, samples in whole.items()}
    whole_ms = {n: round(seconds / n * 1000, 3) for n, seconds in wall.items()}
    parts = {
        n: {k: median([s["parts"].get(k, 0.0) for s in samples]) for k in samples[0]["parts"]}
        for n, samples in whole.items()
    }
    requests = {n: _median_requests(samples) for n, samples in whole.items()}
    warm = {int(n): samples for n, samples in raw.get("warm", {}).items()}
    warm_wall = {n: median([s["wall_seconds"] for s in samples]) for n, samples in warm.items()}
    planning_requests = {int(n): _median_requests(samples) for n, samples in raw["planning"].items()}
    return {
        "scale": {
            "topics": list(counts(largest)),
            "whole_sizes": list(whole_counts(largest)),
            "whole_topics": tenth,  # the topics of whole_1000_seconds (docs/sizing.md)
            "partitions_per_topic": 1,
            "records_per_topic": RECORDS,
            "planning_how": "planner.build_plan in-process with ledger and leases (no Python start-up)",
            "planning_seconds": {str(n): s for n, s in sorted(planning.items())},
            "planning_ms_per_topic": {str(n): v for n, v in sorted(plan_ms.items())},
            "planning_1000_seconds": planning.get(tenth),
            "planning_growth": round(plan_ms[half] / plan_ms[tenth], 3) if plan_ms.get(tenth) else None,
            "whole_seconds": {str(n): s for n, s in sorted(wall.items())},
            "whole_ms_per_topic": {str(n): v for n, v in sorted(whole_ms.items())},
            "whole_parts": {str(n): v for n, v in sorted(parts.items())},
            "whole_1000_seconds": wall.get(tenth),
            "whole_growth": round(whole_ms[half] / whole_ms[tenth], 3) if whole_ms.get(tenth) else None,
            "whole_10000_seconds": wall.get(largest),
            "warm_how": f"a fresh target that first got as many other topics, each written {WARM_RECORDS} records",
            "whole_warm_seconds": {str(n): s for n, s in sorted(warm_wall.items())},
            "whole_warm_1000_seconds": warm_wall.get(tenth),
            "whole_warm_parts": {
                str(n): {k: median([s["parts"].get(k, 0.0) for s in samples]) for k in samples[0]["parts"]}
                for n, samples in sorted(warm.items())
            },
            "whole_warm_requests_per_topic": {
                str(n): per_topic(_median_requests(samples), n) for n, samples in sorted(warm.items())
            },
            "plan_lines": {str(n): max(s["plan_lines"] for s in samples) for n, samples in sorted(whole.items())},
            "requests_how": "counted by the brokers (JMX RequestMetrics: requests and broker ms per request type)",
            "whole_requests": {str(n): v for n, v in sorted(requests.items())},
            "planning_requests": {str(n): v for n, v in sorted(planning_requests.items())},
            "whole_requests_per_topic": {str(n): per_topic(v, n) for n, v in sorted(requests.items())},
            "peak_rss_mib": {
                str(n): {k: max(s["peak_rss_mib"][k] for s in samples) for k in samples[0]["peak_rss_mib"]}
                for n, samples in sorted(whole.items())
            },
            "samples": raw,
        }
    }


def table(summary: dict[str, Any]) -> list[str]:
    if "scale" not in summary:
        return []
    s = summary["scale"]
    plan = s["planning_seconds"]
    ms = s["planning_ms_per_topic"]
    _small, tenth, half = s["topics"]
    largest = s["whole_sizes"][-1]
    lines = [
        f"{'6 scale in topics (x1 x100)':<28} planning (build_plan): "
        + ", ".join(f"{int(n):,} topics {plan[n]:.2f} s ({ms[n]:.2f} ms/topic)" for n in plan),
        f"{'':<28} planning per-topic growth {tenth:,}->{half:,}: {s['planning_growth']:.2f}x "
        f"(target <= {GROWTH_LIMIT})",
    ]
    for n, seconds in s["whole_seconds"].items():
        rss = s["peak_rss_mib"][n]
        per = s["whole_requests_per_topic"][n]
        lines.append(
            f"{'':<28} whole run {int(n):,} topics: {seconds:.1f} s ({s['whole_ms_per_topic'][n]:.1f} ms/topic; "
            f"{_parts(s['whole_parts'][n])}); peak RSS CLI {rss['cli']:.0f} MiB, Spark JVM {rss['spark_jvm']:.0f} MiB"
        )
        for role in ("source", "target"):
            kinds = ", ".join(f"{k} {v:.3g}" for k, v in list(per.get(role, {}).items())[:7])
            lines.append(f"{'':<28}   requests per topic to the {role}: {kinds or 'none'}")
    for n, seconds in s.get("whole_warm_seconds", {}).items():
        lines.append(
            f"{'':<28} whole run {int(n):,} topics, warmed target: {seconds:.1f} s "
            f"({_parts(s['whole_warm_parts'][n])}; target <= {WARM_LIMIT:.0f} s)"
        )
        kinds = ", ".join(f"{k} {v:.3g}" for k, v in list(s["whole_warm_requests_per_topic"][n]["target"].items())[:7])
        lines.append(f"{'':<28}   requests per topic to the target: {kinds or 'none'}")
    growth = s["whole_growth"]
    lines.append(
        f"{'':<28} whole run per-topic growth {tenth:,}->{half:,}: "
        + (f"{growth:.2f}x" if growth is not None else "-")
        + f" (target <= {GROWTH_LIMIT}); {largest:,} topics "
        + (f"{s['whole_10000_seconds']:.1f} s" if s.get("whole_10000_seconds") else "-")
        + f" (target < {LARGEST_LIMIT:.0f} s)"
    )
    return lines


def notes(summary: dict[str, Any]) -> list[str]:
    if "scale" not in summary:
        return []
    return [
        "Scenario 6: planning is timed in-process (planner.build_plan with ledger and leases); the whole runs are "
        "`kafka-migrate run` as a subprocess against a fresh target, their parts from report.json `timings`. "
        "Topics are 1 partition x 100 records, seeded once per session. Requests are counted by the brokers (JMX), "
        "all clients of the run together: the CLI's admin calls and every task's consumers and producer. "
        "The warmed-target run times S/10 topics again against a fresh target that first got as many other "
        "topics, written: a fresh broker's JVM compiles its topic-creation and write paths during its first "
        "thousand topics (5.4 CPU-s for them, 3.0-3.4 s for each next thousand), which a long-running target "
        "has long done."
    ]
